package environ

import (
	"slices"
	"testing"
)

func TestTheLastEntryWinsAsExecGivesIt(t *testing.T) {
	env := []string{"A=1", "AB=x", "A=2", "B="}
	for _, c := range []struct {
		name, want string
		set        bool
	}{{"A", "2", true}, {"AB", "x", true}, {"B", "", true}, {"C", "", false}, {"", "", false}} {
		if v, ok := Lookup(env, c.name); v != c.want || ok != c.set {
			t.Errorf("Lookup(%q) = %q, %v; want %q, %v", c.name, v, ok, c.want, c.set)
		}
	}
	if got := With(env, "A", "3"); !slices.Equal(got, []string{"AB=x", "B=", "A=3"}) || Get(got, "A") != "3" {
		t.Errorf("With: %q", got)
	}
	if got := With(env, "A", ""); !slices.Equal(got, env) {
		t.Errorf("With an empty value changed env: %q", got)
	}
	if got := Without(env, "A"); !slices.Equal(got, []string{"AB=x", "B="}) {
		t.Errorf("Without: %q", got)
	}
	if env[0] != "A=1" {
		t.Errorf("env changed in place: %q", env)
	}
}
