package stream

// block collects one content block: its keys come in any order, so what it
// is (tool_use, text, tool_result) is only known at its end.
type block struct {
	typ, id, name, text, toolUseID string
	input                          capBuf
	background                     bool
}

func (b *block) reset() {
	b.typ, b.id, b.name, b.text, b.toolUseID = "", "", "", "", ""
	b.input.reset(MaxInputBytes)
	b.background = false
}

func (d *Decoder) endBlock() {
	b, ev := &d.blk, &d.ev
	switch b.typ {
	case "tool_use":
		if len(ev.ToolUses) < MaxListItems {
			ev.ToolUses = append(ev.ToolUses, ToolUse{
				ID: b.id, Name: b.name,
				Input: b.input.text(), InputTruncated: b.input.trunc,
				Background: b.background,
			})
		}
	case "text":
		if len(ev.Texts) < MaxListItems {
			ev.Texts = append(ev.Texts, b.text)
		}
	case "tool_result":
		if len(ev.ToolResults) < MaxListItems {
			ev.ToolResults = append(ev.ToolResults, b.toolUseID)
			if d.tr != nil {
				ev.ToolResultDetails = append(ev.ToolResultDetails, d.tr.detail(b.toolUseID))
			}
		}
	}
}
