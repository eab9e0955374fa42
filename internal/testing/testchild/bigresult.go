package testchild

import (
	"bufio"
	"encoding/json"
	"io"
)

// BigResult prints init, a text line and a success result whose result
// text is at least EnvSize bytes (decoded) of BigResultPeriod, written as
// it goes: neither the child nor the test that checks the output ever
// holds the text whole (BigResultText writes what it decodes to).
const BigResult = "big-result"

// BigResultPeriod is one period of BigResult's result as written in JSON:
// every escape the CLI writes, a surrogate pair, HTML characters that
// encoding/json escapes again, U+2028 raw and escaped, multi-byte runes,
// and workflow commands that GitHub Actions must not run.
const BigResultPeriod = `Line\none: \"quoted\" back\\slash tab\t caf\u00e9 café \ud83d\ude00 😀 <b>bold</b> & more ` +
	"\u2028" + ` \u2028 \u2029 ctrl\u0001 日本語 ##[error]legacy\n::set-output name=x::y\n`

// bigResultPeriod is BigResultPeriod decoded, and how many periods make
// a text of at least size bytes.
func bigResultPeriod(size int) (string, int, error) {
	var period string
	if err := json.Unmarshal([]byte(`"`+BigResultPeriod+`"`), &period); err != nil {
		return "", 0, err
	}
	return period, size/len(period) + 1, nil
}

// BigResultText writes the text BigResult's result decodes to, for a
// child run with EnvSize size.
func BigResultText(w io.Writer, size int) error {
	period, n, err := bigResultPeriod(size)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	for range n {
		bw.WriteString(period)
	}
	return bw.Flush()
}

// writeBigResult prints the result line of session without building it:
// a line of hundreds of megabytes goes out through w's buffer.
func writeBigResult(w *bufio.Writer, size int, session string) {
	_, n, err := bigResultPeriod(size)
	if err != nil {
		panic(err) // BigResultPeriod is a constant
	}
	w.WriteString(`{"type":"result","subtype":"success","is_error":false,"api_error_status":null,"result":"`)
	for range n {
		w.WriteString(BigResultPeriod)
	}
	w.WriteString(`","session_id":"` + session + `","total_cost_usd":0.01,"terminal_reason":"completed"}` + "\n")
	w.Flush()
}

// bigResult is the BigResult behaviour; println prints a short line.
func bigResult(out *bufio.Writer, println func(string), session string) int {
	println(InitLine)
	println(TextLine)
	writeBigResult(out, envInt(EnvSize, 100<<20), session)
	return 0
}
