package stream

// stringCap is how much of a string value of f is kept; 0 means skip it.
func (d *Decoder) stringCap(f field) int {
	switch f {
	case fResult:
		return MaxResultBytes
	case fBlockText:
		return maxTextBytes
	case fErrorItem:
		if len(d.ev.Errors) >= MaxListItems {
			return 0
		}
		return MaxShortBytes
	case fTaskItemID, fTaskItemType, fTaskItemStatus, fTaskItemDesc:
		if len(d.ev.Tasks) >= MaxListItems {
			return 0
		}
		if f == fTaskItemDesc {
			return MaxInputBytes
		}
		return MaxShortBytes
	case fDescription:
		return MaxInputBytes
	case fMCPName, fMCPStatus:
		if len(d.ev.MCPServers) >= MaxListItems {
			return 0
		}
		return MaxShortBytes
	case fType, fSubtype, fSessionID, fParentToolUseID, fModel, fTerminalReason, fError,
		fRLStatus, fRLType, fRLErrorCode, fAPIError, fEventType, fEventBlockType, fEventBlockName, fEventDeltaType, fBlockType, fBlockID, fBlockName, fBlockToolUseID,
		fVersion, fTaskID, fToolUseID, fStatus, fTaskType, fOutputFile, fSummary, fOriginKind, fPartType,
		fHookID, fHookName, fHookEvent, fHookOutcome,
		fResumeReason, fAPIErrorCode, fStartupFailure, fReason, fSessionState,
		fConfigPath, fConfigBackup: // 4 KiB: Linux's PATH_MAX
		return MaxShortBytes
	}
	return 0
}

// setString stores a string field: the line's own (here), its task,
// hook and outcome fields (setLaterString), or an item's (setItemString).
func (d *Decoder) setString(f field, s string, trunc bool) {
	ev := &d.ev
	switch f {
	case fType:
		ev.Type = s
	case fSubtype:
		ev.Subtype = s
	case fSessionID:
		ev.SessionID = s
	case fParentToolUseID:
		ev.ParentToolUseID = s
	case fModel:
		ev.Model = s
	case fResult:
		ev.Result, ev.ResultTruncated = s, trunc
	case fErrorItem:
		ev.Errors = append(ev.Errors, s)
	case fTerminalReason:
		ev.TerminalReason = s
	case fError:
		ev.Error = s
	case fRLStatus:
		ev.RateLimitStatus = s
	case fRLType:
		ev.RateLimitType = s
	case fEventType:
		ev.StreamEventType = s
	case fEventBlockType:
		ev.StreamBlockType = s
	case fEventBlockName:
		ev.StreamBlockName = s
	case fEventDeltaType:
		ev.StreamDeltaType = s
	case fRLErrorCode:
		ev.RateLimitErrorCode = s
	case fAPIError:
		ev.APIError = s
	case fVersion:
		ev.ClaudeCodeVersion = s
	default:
		d.setLaterString(f, s, trunc)
	}
}

// setLaterString stores the string fields of tasks, hooks and how a run
// ended (the ones later CLIs added), or passes on an item's.
func (d *Decoder) setLaterString(f field, s string, trunc bool) {
	ev := &d.ev
	switch f {
	case fTaskID:
		ev.TaskID = s
	case fToolUseID:
		ev.ToolUseID = s
	case fStatus:
		ev.Status = s
	case fTaskType:
		ev.TaskType = s
	case fDescription:
		ev.Description = s
	case fOutputFile:
		ev.OutputFile = s
	case fSummary:
		ev.Summary = s
	case fOriginKind:
		ev.OriginKind = s
	case fHookID:
		ev.HookID = s
	case fHookName:
		ev.HookName = s
	case fHookEvent:
		ev.HookEvent = s
	case fHookOutcome:
		ev.HookOutcome = s
	case fResumeReason:
		ev.ResumeReason = s
	case fAPIErrorCode:
		ev.APIErrorCode = s
	case fStartupFailure:
		ev.StartupFailureReason = s
	case fReason:
		ev.Reason = s
	case fSessionState:
		ev.SessionState = s
	case fConfigPath:
		ev.InvalidConfigFile.Path, ev.InvalidConfigFile.PathTruncated = s, trunc
	case fConfigBackup:
		ev.InvalidConfigFile.BackupPath = s
	default:
		d.setItemString(f, s)
	}
}

// setItemString stores a string field of an item in a list: a task, an
// MCP server, a content block, a part of a tool result.
func (d *Decoder) setItemString(f field, s string) {
	b := &d.blk
	switch f {
	case fTaskItemID:
		d.task.ID = s
	case fTaskItemType:
		d.task.Type = s
	case fTaskItemDesc:
		d.task.Description = s
	case fTaskItemStatus:
		d.task.Status = s
	case fMCPName:
		d.mcp.Name = s
	case fMCPStatus:
		d.mcp.Status = s
	case fBlockType:
		b.typ = s
	case fBlockID:
		b.id = s
	case fBlockName:
		b.name = s
	case fBlockText:
		b.text = s
	case fBlockToolUseID:
		b.toolUseID = s
	case fPartType:
		d.tr.partType = s
	}
}

func (d *Decoder) setBool(f field, v bool) {
	switch f {
	case fIsError:
		d.ev.IsError = v
	case fBackgrounded:
		d.ev.Backgrounded = v
	case fBackground:
		d.blk.background = v
	case fResultIsError:
		d.tr.isError = v
	case fRLUsingOverage:
		d.ev.RateLimitUsingOverage = v
	case fConfigGlobal:
		d.ev.InvalidConfigFile.IsGlobal = v
	}
}

func (d *Decoder) opened(c ctx) {
	switch c {
	case ctxUsage:
		d.ev.HasUsage = true
	case ctxBlock:
		d.blk.reset()
		if d.tr != nil {
			d.tr.startBlock()
		}
	case ctxTasks:
		// A snapshot: a repeated key replaces it, as encoding/json would.
		d.ev.Tasks, d.ev.HasTasks = nil, true
	case ctxTask:
		d.task = Task{}
	case ctxMCPServers:
		d.ev.MCPServers = nil // a repeated key replaces the list
	case ctxMCPServer:
		d.mcp = MCPServer{}
	case ctxNoResponse:
		// Its presence is the fact (the API sent no headers); a repeated
		// key replaces it, as encoding/json would.
		d.ev.NoResponse, d.ev.NoResponseWaitedMS, d.ev.NoResponseRetryWaitMS = true, 0, 0
	case ctxConfigFile:
		d.ev.InvalidConfigFile = ConfigFile{}
	}
}

func (d *Decoder) closed(c ctx) {
	switch c {
	case ctxBlock:
		d.endBlock()
	case ctxResultPart:
		d.tr.endPart()
	case ctxTask:
		if len(d.ev.Tasks) < MaxListItems {
			d.ev.Tasks = append(d.ev.Tasks, d.task)
		}
	case ctxMCPServer:
		if len(d.ev.MCPServers) < MaxListItems {
			d.ev.MCPServers = append(d.ev.MCPServers, d.mcp)
		}
	}
}
