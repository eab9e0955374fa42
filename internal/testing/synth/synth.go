// Package synth writes synthetic Claude Code stream-json transcripts for
// malarun's benchmarks: a long run with partial messages (stream_event
// lines), and single lines of any size holding a base64 image, written as
// they are generated so that a 100 MB line is never held in memory. The
// line shapes are those of the recordings in testdata/transcripts.
//
// It is used by the fake CLI (internal/testing/testchild, which the benchmark
// harness in tools/bench runs too) and by the stream package's benchmarks,
// never by the malarun binary.
package synth

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// Init is the CLI's first line for session.
func Init(session string) string {
	return `{"type":"system","subtype":"init","cwd":"/home/user/project","session_id":"` + session +
		`","tools":["Task","Bash","Edit","Read","WebFetch","WebSearch","Write"],"mcp_servers":[],"model":"claude-opus-4-8[1m]",` +
		`"permissionMode":"default","apiKeySource":"ANTHROPIC_API_KEY","claude_code_version":"2.1.197","output_style":"default",` +
		`"uuid":"40ba5f29-342e-49d7-9c00-d771897ac33b","fast_mode_state":"off"}`
}

// Text is an assistant message with one text block.
func Text(session, msgID, text string) string {
	return `{"type":"assistant","message":{"id":"` + msgID + `","type":"message","role":"assistant","model":"claude-opus-4-8",` +
		`"content":[{"type":"text","text":"` + text + `"}],"stop_reason":null,"stop_sequence":null,` +
		`"usage":{"input_tokens":1000,"output_tokens":12,"cache_read_input_tokens":0,"cache_creation_input_tokens":0},"context_management":null},` +
		`"parent_tool_use_id":null,"session_id":"` + session + `","uuid":"3d3500bc-34ac-4caf-8c37-ec27bda93ec3"}`
}

// Result is a successful result line whose result text is text.
func Result(session, text string) string {
	return `{"type":"result","subtype":"success","is_error":false,"api_error_status":null,"duration_ms":103,"duration_api_ms":26,` +
		`"num_turns":1,"result":"` + text + `","stop_reason":"end_turn","session_id":"` + session + `","total_cost_usd":0.00525,` +
		`"usage":{"input_tokens":1000,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":10},` +
		`"modelUsage":{"claude-opus-4-8[1m]":{"inputTokens":1000,"outputTokens":10,"costUSD":0.00525,"contextWindow":1000000,"maxOutputTokens":64000}},` +
		`"permission_denials":[],"terminal_reason":"completed","fast_mode_state":"off","uuid":"d0d11d2b-f28a-46ce-9b7a-0b1946989d5a"}`
}

// ResultText is the result text of the transcripts written here.
const ResultText = "All done."

// LineWriter receives one line at a time, without its newline; a writer to
// a file should write it with its newline in one call, as the CLI does.
type LineWriter func(line string) error

// Newline adapts w to a LineWriter that writes each line and its newline
// in one Write.
func Newline(w io.Writer) LineWriter {
	var buf []byte
	return func(line string) error {
		buf = append(append(buf[:0], line...), '\n')
		_, err := w.Write(buf)
		return err
	}
}

// Partial writes a run of about n lines as the CLI prints it with
// --include-partial-messages: an init line, then turns of message_start,
// content_block_start, a text_delta per chunk of the reply, the assistant
// message, content_block_stop, message_delta and message_stop; every fifth
// turn calls a tool (tool_use, then the user line with its tool_result).
// The last line is a successful result.
func Partial(emit LineWriter, session string, n int) error {
	if err := emit(Init(session)); err != nil {
		return err
	}
	tail := `,"session_id":"` + session + `","parent_tool_use_id":null,"uuid":"20428e81-fd1a-43e7-bd21-5a5d77cf14b3"}`
	words := []string{"Reading", " the", " failing", " test", " output", " first", ",", " then", " the", " handler", " in", " internal/api", "."}
	lines := 1
	for turn := 1; lines < n-1; turn++ {
		msg := fmt.Sprintf("msg_%d", turn)
		var out []string
		out = append(out,
			`{"type":"stream_event","event":{"type":"message_start","message":{"id":"`+msg+`","type":"message","role":"assistant","model":"claude-opus-4-8","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1000,"output_tokens":1,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}}}`+tail,
			`{"type":"stream_event","event":{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`+tail)
		var text strings.Builder
		for i, w := range words {
			text.WriteString(w)
			out = append(out, fmt.Sprintf(`{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"%s"}}%s`, words[i], tail))
		}
		if turn%5 == 0 {
			id := fmt.Sprintf("toolu_%d", turn)
			out = append(out,
				`{"type":"assistant","message":{"id":"`+msg+`","type":"message","role":"assistant","model":"claude-opus-4-8","content":[{"type":"text","text":"`+text.String()+`"},{"type":"tool_use","id":"`+id+`","name":"Bash","input":{"command":"go test ./...","description":"run the tests"}}],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1000,"output_tokens":12,"cache_read_input_tokens":0,"cache_creation_input_tokens":0},"context_management":null},"parent_tool_use_id":null,"session_id":"`+session+`","uuid":"7ee87d9a-2328-4a08-8f8c-d320d22bf845"}`,
				`{"type":"user","message":{"role":"user","content":[{"tool_use_id":"`+id+`","type":"tool_result","content":"ok  \tgithub.com/example/project/internal/api\t0.412s","is_error":false}]},"parent_tool_use_id":null,"session_id":"`+session+`","uuid":"04079176-b43e-4b5f-8210-7ab5a100f328","timestamp":"2026-11-22T05:22:24.220Z"}`)
		} else {
			out = append(out, Text(session, msg, text.String()))
		}
		out = append(out,
			`{"type":"stream_event","event":{"type":"content_block_stop","index":0}`+tail,
			`{"type":"stream_event","event":{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":12}}`+tail,
			`{"type":"stream_event","event":{"type":"message_stop"}`+tail)
		for _, l := range out {
			if err := emit(l); err != nil {
				return err
			}
		}
		lines += len(out)
	}
	return emit(Result(session, ResultText))
}

// base64Alphabet repeats through an image's data: valid base64, no escapes,
// like the data of a real image block.
const base64Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

// ImageLine writes, with its newline, a user line whose tool_result holds
// an image block (as the Read tool returns for a screenshot) with size
// bytes of base64 data. The data is written in 64 KiB pieces as it is
// generated.
func ImageLine(w io.Writer, session string, size int) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString(`{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_img","type":"tool_result","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"`)
	chunk := []byte(strings.Repeat(base64Alphabet, (64<<10)/len(base64Alphabet)))
	for left := size; left > 0; left -= len(chunk) {
		bw.Write(chunk[:min(left, len(chunk))])
	}
	bw.WriteString(`"}}],"is_error":false}]},"parent_tool_use_id":null,"session_id":"` + session + `","uuid":"04079176-b43e-4b5f-8210-7ab5a100f328"}` + "\n")
	return bw.Flush()
}
