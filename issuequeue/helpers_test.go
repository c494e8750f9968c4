package issuequeue

import "context"

// recoverNow takes the write lock and completes a change that a command
// killed between two writes left half done (see IntentFile), as every
// Update does first.
func (s *Store) recoverNow(ctx context.Context) error {
	return s.locked(ctx, func() error { return nil })
}

// setSectionFenced is SetSection that always fences the text, as command
// output is written.
func setSectionFenced(key, section, text string) Edit {
	return Edit{kind: editSection, key: key, name: section, value: text, fenced: true}
}
