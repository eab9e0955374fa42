package proc

import "testing"

// A record says which boot and PID namespace its pids belong to; only the
// same view may act on them. The Linux and darwin forms never meet.
func TestSameViewAcrossKernels(t *testing.T) {
	linux := Identity{Pid: 42, StartTime: 1000, BootID: "6a3c1c0e-8f4f-4a53-9a4e-3c8f0f7b2a11", PidNS: "4026531836"}
	darwin := Identity{Pid: 42, StartTime: 1000, BootID: "darwin:6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b", PidNS: "darwin"}
	tests := []struct {
		name       string
		here, then Identity
		want       bool
	}{
		{"linux, same boot and namespace", linux, linux, true},
		{"darwin, same boot", darwin, darwin, true},
		{"a linux record read on darwin", darwin, linux, false},
		{"a darwin record read on linux", linux, darwin, false},
		{"linux, another boot", linux, Identity{BootID: "0e9d2b3a-0000-4000-8000-000000000000", PidNS: linux.PidNS}, false},
		{"linux, another container", linux, Identity{BootID: linux.BootID, PidNS: "4026532200"}, false},
		{"darwin, after a reboot", darwin, Identity{BootID: "darwin:0e9d2b3a-0000-4000-8000-000000000000", PidNS: "darwin"}, false},
		{"the same uuid, one kernel each", Identity{BootID: "6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b", PidNS: "1"}, Identity{BootID: darwin.BootID, PidNS: "1"}, false},
		{"an older record without a view", linux, Identity{Pid: 42, StartTime: 1000}, false},
		{"a view that could not be read here", Identity{}, Identity{}, false},
	}
	for _, tt := range tests {
		if got := tt.here.SameView(tt.then); got != tt.want {
			t.Errorf("%s: SameView = %v, want %v", tt.name, got, tt.want)
		}
	}
	if self := Self(); !self.SameView(self) {
		t.Errorf("this process's own view %+v is not the same as itself", self)
	}
}
