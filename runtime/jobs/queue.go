package jobs

// queue keeps one run going per resource key; the others wait in the order they came. It holds
// no lock of its own: the Service's mutex guards it.
type queue struct {
	going   map[string]string   // resource key → the job running there
	waiting map[string][]string // resource key → jobs waiting, oldest first
}

func newQueue() *queue {
	return &queue{going: map[string]string{}, waiting: map[string][]string{}}
}

// add puts a job in line for key and reports whether it may start now.
func (q *queue) add(id, key string) bool {
	if _, busy := q.going[key]; !busy {
		q.going[key] = id
		return true
	}
	q.waiting[key] = append(q.waiting[key], id)
	return false
}

// remove takes a job out of line, waiting or going. When it was going, the next job for the key
// (if any) now goes and is returned.
func (q *queue) remove(id, key string) (next string) {
	if q.going[key] == id {
		delete(q.going, key)
		w := q.waiting[key]
		if len(w) == 0 {
			delete(q.waiting, key)
			return ""
		}
		next, q.waiting[key] = w[0], w[1:]
		if len(q.waiting[key]) == 0 {
			delete(q.waiting, key)
		}
		q.going[key] = next
		return next
	}
	w := q.waiting[key]
	for i, x := range w {
		if x == id {
			q.waiting[key] = append(w[:i:i], w[i+1:]...)
			break
		}
	}
	if len(q.waiting[key]) == 0 {
		delete(q.waiting, key)
	}
	return ""
}

// position is how many jobs are ahead of id for key: 0 when it is going, -1 when it is not in line.
func (q *queue) position(id, key string) int {
	if q.going[key] == id {
		return 0
	}
	for i, x := range q.waiting[key] {
		if x == id {
			return i + 1
		}
	}
	return -1
}
