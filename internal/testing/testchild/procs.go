package testchild

import (
	"bytes"
	"os"
	"strconv"
)

// ProcessesWithEnv lists the processes but this one whose environment
// holds kv ("HOME=/tmp/x"): everything a test's malarun started, and what
// those started, when kv is the test's own. Zombies are listed too; see
// Zombie.
func ProcessesWithEnv(kv string) []int {
	want := []byte(kv + "\x00")
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !bytes.HasPrefix(env, want) && !bytes.Contains(env, append([]byte{0}, want...)) {
			continue
		}
		pids = append(pids, pid)
	}
	return pids
}

// Zombie reports whether pid has exited and waits for its parent to reap it.
func Zombie(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	i := bytes.LastIndexByte(stat, ')')
	return err == nil && i > 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}
