package tools

import (
	"encoding/json"
	"fmt"
)

// fitList keeps the rows from offset on that fit in listBudget as JSON, cut at a whole row, so a
// long list reaches the model as complete items and a note naming the offset to go on from,
// never as a row cut in half by headAndTail. noun is the plural the note uses ("pages").
func fitList[T any](rows []T, offset int, tool, noun string) (kept []T, note string) {
	total := len(rows)
	offset = min(max(offset, 0), total)
	size := 2
	for _, r := range rows[offset:] {
		b, _ := json.Marshal(r)
		if size+len(b)+1 > listBudget && len(kept) > 0 {
			break
		}
		size += len(b) + 1
		kept = append(kept, r)
	}
	if kept == nil {
		kept = []T{}
	}
	if end := offset + len(kept); end < total {
		note = fmt.Sprintf("Showing %s %d–%d of %d; call %s again with offset %d for the rest.", noun, offset+1, end, total, tool, end)
	}
	return kept, note
}

// listData is a list result's data: the rows under key, the total and the note, if any.
func listData(key string, rows any, total int, note string) map[string]any {
	d := map[string]any{key: rows, "total": total}
	if note != "" {
		d["note"] = note
	}
	return d
}
