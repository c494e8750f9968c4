package issuequeue

// Apply returns the queue's source with the edits applied.
func (q *Queue) Apply(edits ...Edit) ([]byte, error) { return q.d.apply(edits, false) }

// Rebase re-applies edits, computed against q, to current: the file's
// content now, which a person or agent changed after q was read. It fails
// with a *ConflictError if current changed something an edit changes to a
// different value, and with a *ValidationError if current is invalid.
func (q *Queue) Rebase(current []byte, edits ...Edit) ([]byte, error) {
	cur := ParseQueue(q.d.name, current)
	if err := cur.Err(); err != nil {
		return nil, err
	}
	if err := rebaseCheck(q.d, cur.d, edits); err != nil {
		return nil, err
	}
	return cur.Apply(dropRemoved(cur.d, edits)...)
}

// rebaseCheck reports the first edit whose target differs between old and
// cur in a way the edit would overwrite.
func rebaseCheck(old, cur *doc, edits []Edit) error {
	for _, e := range edits {
		or, oldOK := old.byKey[e.key]
		cr, curOK := cur.byKey[e.key]
		switch e.kind {
		case editAppend:
			if curOK {
				return &ConflictError{File: cur.name, Key: e.key, Name: "ID", Theirs: "already used"}
			}
		case editRemove:
			if curOK && oldOK && string(old.src[or.start:or.end]) != string(cur.src[cr.start:cr.end]) {
				return &ConflictError{File: cur.name, Key: e.key}
			}
		case editField, editSection, editRow:
			if oldOK && !curOK {
				return &ConflictError{File: cur.name, Key: e.key, Theirs: "removed"}
			}
			if !oldOK || !curOK || e.kind == editRow {
				continue
			}
			// A field or section they changed conflicts unless they
			// changed it to what the edit writes.
			read, want := (*doc).field, e.value
			if e.kind == editSection { // what sectionText reads back once e is applied
				read, want = (*doc).sectionText, Unfence(sectionBody(e.value, e.fenced))
			}
			ov, ook := read(old, or, e.name)
			cv, cok := read(cur, cr, e.name)
			if (ov != cv || ook != cok) && cv != want {
				c := &ConflictError{File: cur.name, Key: e.key, Name: e.name}
				if e.kind == editField {
					c.Theirs = cv
				}
				return c
			}
		}
	}
	return nil
}

// dropRemoved drops removals of records that are already gone.
func dropRemoved(cur *doc, edits []Edit) []Edit {
	out := edits[:0:0]
	for _, e := range edits {
		if _, ok := cur.byKey[e.key]; e.kind == editRemove && !ok {
			continue
		}
		out = append(out, e)
	}
	return out
}
