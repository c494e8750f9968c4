package signature

// The rules V2 for maven's and gradle's output.

// javaFirst are the first bytes of the lines classifyJava knows.
const javaFirst = "[>"

// classifyJava classifies maven's and gradle's lines (see classify).
func classifyJava(t []byte) (act, kind int, ok bool) {
	switch t[0] {
	case '[':
		if hasWord(t, "[INFO]") {
			return aDrop, 0, true // maven's progress
		}
	case '>':
		if hasWord(t, "> Task :") {
			return aDrop, 0, true
		}
	}
	return 0, 0, false
}
