package stream

import "unicode/utf8"

// Replaying a run (malarun show) needs more of a tool result than the
// supervisor does: what the tool said, how much, and whether it failed.
// The supervisor only needs the tool_use_id, and its decoder must not pay
// for more, so the details are kept only after KeepToolResults: where the
// shared parser calls in here, it first checks that Decoder.tr is set, and
// the fields and contexts of this file arise only then. A tool result's
// content can be hundreds of MB (a file, base64): its text goes through the
// decoder's own string scanner into a writer that counts it and keeps its
// first and last few KiB, never the whole.

// ToolResult is one tool_result block of a user line, kept only when the
// decoder was asked to (Decoder.KeepToolResults).
type ToolResult struct {
	ToolUseID string
	IsError   bool // the block's is_error
	// Bytes is the length of the content's text, decoded: the text parts
	// joined with "\n" (a string content is one part).
	Bytes int64
	// Head is the first maxToolResultHeadBytes bytes of that text, cut on a
	// UTF-8 boundary.
	Head string
	// Tail is the last maxToolResultTailBytes bytes, only when the text is
	// longer than Head; it never overlaps Head and starts on a UTF-8
	// boundary.
	Tail string
	// Images counts the image blocks of the content; their data is not in
	// Bytes.
	Images int
}

// Caps on what a toolResult keeps of its text: enough to show a result,
// and a size that does not depend on the result's.
const (
	maxToolResultHeadBytes = 4 << 10
	maxToolResultTailBytes = 4 << 10
)

// KeepToolResults makes the decoder fill Event.ToolResultDetails from the
// next line on. It costs a few small buffers and one of a chunk and a read
// (a chunk is spilled before a read's bytes join it), allocated once here.
func (d *Decoder) KeepToolResults() {
	if d.tr != nil {
		return
	}
	d.tr = &toolResults{}
	d.tr.text.init()
	d.tr.part.init()
	d.tr.sink.b = make([]byte, 0, max(copyChunk, bufSize)+utf8.UTFMax)
}

// toolResults is the state of the tool_result block being read.
type toolResults struct {
	text     resultText // the content's text so far
	part     resultText // the text of the content part being read
	partType string     // the type of that part
	isError  bool
	images   int
	// sink runs the string scanner's decoded bytes into text or part, in
	// chunks of copyChunk bytes, valid UTF-8 and split between runes.
	sink capBuf
}

// toolResultKey tells the fields of the keys that only this mode reads.
// Each field is reset here, when its key is read, not when its value is: a
// repeated key replaces the earlier value whatever the new one is (null, a
// number), as encoding/json does.
func (d *Decoder) toolResultKey(top ctx, key []byte) field {
	tr := d.tr
	switch top {
	case ctxBlock:
		switch string(key) {
		case "is_error":
			tr.isError = false
			return fResultIsError
		case "content":
			tr.text.reset()
			tr.images = 0
			if len(d.ev.ToolResultDetails) >= MaxListItems {
				return fNone // not kept: only validated, at full speed
			}
			return fResultContent
		}
	case ctxResultPart:
		switch string(key) {
		case "type":
			tr.partType = ""
			return fPartType
		case "text":
			tr.part.reset()
			return fPartText
		}
	}
	return fNone
}

// toolResultString reads a string that is a tool result's text: the
// content itself, or the text of one of its parts.
func (d *Decoder) toolResultString(f field) bool {
	w := &d.tr.text
	if f == fPartText {
		w = &d.tr.part
	}
	d.tr.sink.spillTo(w, copyChunk)
	if !d.scanString(&d.tr.sink, false) {
		return false
	}
	d.tr.sink.spill(true)
	return true
}

// startBlock starts a content block: it may be a tool_result. The part
// is reset here too, as a line cut short may have left one half read.
func (tr *toolResults) startBlock() {
	tr.text.reset()
	tr.isError, tr.images = false, 0
	tr.part.reset()
	tr.partType = ""
}

// endPart ends one part of an array content: a text part joins the text, an
// image is counted, anything else (tool_reference, ...) is left out. Its
// type may come after its text, so the text waits in tr.part until here.
func (tr *toolResults) endPart() {
	switch tr.partType {
	case "text":
		tr.text.join(&tr.part)
	case "image":
		tr.images++
	}
	tr.part.reset()
	tr.partType = ""
}

// detail is the toolResult of the block that just ended.
func (tr *toolResults) detail(id string) ToolResult {
	t := &tr.text
	return ToolResult{
		ToolUseID: id, IsError: tr.isError, Images: tr.images,
		Bytes: t.n, Head: string(t.head), Tail: t.tailText(),
	}
}

// resultText takes a text in pieces that are valid UTF-8 and split between
// runes (what capBuf.spill writes), and keeps its length, its head and its
// last maxToolResultTailBytes bytes, whatever its length.
type resultText struct {
	n        int64
	parts    int // text parts joined so far
	head     []byte
	headFull bool   // a rune did not fit: nothing more goes into head
	last     []byte // the text's last bytes: up to 2× the tail, so that it moves rarely
}

func (t *resultText) init() {
	t.head = make([]byte, 0, maxToolResultHeadBytes)
	t.last = make([]byte, 0, 2*maxToolResultTailBytes)
}

func (t *resultText) reset() {
	t.n, t.parts = 0, 0
	t.head, t.headFull = t.head[:0], false
	t.last = t.last[:0]
}

// Write adds p, which is valid UTF-8 and begins and ends between runes.
func (t *resultText) Write(p []byte) (int, error) {
	t.n += int64(len(p))
	t.addHead(p)
	t.addLast(p)
	return len(p), nil
}

func (t *resultText) addHead(p []byte) {
	if t.headFull {
		return
	}
	room := maxToolResultHeadBytes - len(t.head)
	if len(p) <= room {
		t.head = append(t.head, p...)
		return
	}
	// A rune that does not fit ends the head: a shorter one after it
	// would make the head something other than the text's beginning.
	t.head = append(t.head, cutAtRune(p, room)...)
	t.headFull = true
}

func (t *resultText) addLast(p []byte) {
	const tail = maxToolResultTailBytes
	if len(p) >= tail {
		t.last = append(t.last[:0], p[len(p)-tail:]...)
		return
	}
	if len(t.last)+len(p) > cap(t.last) {
		// Slide the bytes still needed to the front; the buffer never grows.
		keep := tail - len(p)
		t.last = append(t.last[:0], t.last[len(t.last)-keep:]...)
	}
	t.last = append(t.last, p...)
}

// join appends p, the text of one part, after a "\n" when a part came
// before. p's head and last bytes are all of p that the joined head and
// tail can need.
func (t *resultText) join(p *resultText) {
	if t.parts > 0 {
		t.Write([]byte{'\n'})
	}
	t.parts++
	t.n += p.n
	t.addHead(p.head)
	if p.headFull {
		// p's next rune did not fit in a head of its own, so it does not
		// fit in the room left here either.
		t.headFull = true
	}
	t.addLast(p.last)
}

// tailText is the tail of the text: its last bytes after the head, from a
// rune's first byte on.
func (t *resultText) tailText() string {
	start := max(int64(len(t.head)), t.n-maxToolResultTailBytes)
	if start >= t.n {
		return ""
	}
	b := t.last[int64(len(t.last))-(t.n-start):]
	for len(b) > 0 && !utf8.RuneStart(b[0]) {
		b = b[1:]
	}
	return string(b)
}
