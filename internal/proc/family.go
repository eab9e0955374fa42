package proc

// Where a tree's orphans come home to malarun (it is the child subreaper,
// or PID 1), every process of the tree stays a descendant of malarun for
// as long as it lives: its parent is another of the tree's processes, or
// malarun. So the tree can be found among malarun's descendants, read
// from the kernel's lists of each process's children, instead of among
// every process of the machine: a few reads where a walk of /proc reads
// one file per process of the machine (hundreds on a busy runner), every
// 10 ms of a stop and on every SIGCHLD while a CLI runs.

// family is malarun's descendants, each before its children.
func (s *Spawner) family() []procStat {
	var rows []procStat
	queue := childPids(s.self)
	read := map[int]bool{}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if read[pid] {
			continue
		}
		read[pid] = true
		row, err := readStat(pid)
		if err != nil {
			continue // gone meanwhile
		}
		rows = append(rows, row)
		queue = append(queue, childPids(pid)...)
	}
	return rows
}

// children is malarun's own children: all a reaper needs (an adopted
// zombie is one of them), where the kernel lists them; else every
// process of the machine.
func (s *Spawner) children() ([]procStat, error) {
	if !s.readsFamily {
		return snapshot()
	}
	var rows []procStat
	for _, pid := range childPids(s.self) {
		if row, err := readStat(pid); err == nil {
			rows = append(rows, row)
		}
	}
	return rows, nil
}
