package stream

// ctx is where the parser stands, as far as the kept fields are concerned:
// the key path is reduced to the few containers that hold something we want,
// and everything below ctxSkip is only validated.
type ctx uint8

const (
	ctxSkip ctx = iota
	ctxTop
	ctxMessage       // .message
	ctxUsage         // .usage, .message.usage
	ctxContent       // .message.content
	ctxBlock         // .message.content[i]
	ctxModelUsage    // .modelUsage
	ctxModelEntry    // .modelUsage.<model>
	ctxErrors        // .errors
	ctxRateLimit     // .rate_limit_info
	ctxEvent         // .event
	ctxTasks         // .tasks
	ctxTask          // .tasks[i]
	ctxPatch         // .patch
	ctxOrigin        // .origin
	ctxInput         // .message.content[i].input, when an object
	ctxResultContent // .message.content[i].content, when an array (KeepToolResults only)
	ctxResultPart    // .message.content[i].content[j]
	ctxMCPServers    // .mcp_servers (init)
	ctxMCPServer     // .mcp_servers[i]
)

// field names the value about to be parsed.
type field uint8

const (
	fNone field = iota
	fType
	fSubtype
	fSessionID
	fParentToolUseID
	fModel
	fIsError
	fBackgrounded
	fResult
	fAPIErrorStatus
	fErrors
	fErrorItem
	fTerminalReason
	fTotalCost
	fUsage
	fInputTokens
	fOutputTokens
	fCacheCreation
	fCacheRead
	fModelUsage
	fModelEntry
	fContextWindow
	fAttempt
	fMaxRetries
	fRetryDelay
	fErrorStatus
	fError
	fRateLimit
	fRLStatus
	fRLType
	fRLResetsAt
	fEvent
	fEventType
	fMessage
	fContent
	fBlock
	fBlockType
	fBlockID
	fBlockName
	fBlockInput
	fBlockText
	fBlockToolUseID
	fBackground // a run_in_background key of a tool input
	fVersion
	fTaskID
	fToolUseID
	fStatus
	fTaskType
	fDescription
	fOutputFile
	fSummary
	fTasks
	fTask
	fTaskItemID
	fTaskItemType
	fTaskItemDesc
	fTaskItemStatus
	fPatch
	fOrigin
	fOriginKind
	fRLErrorCode
	fResultIsError // a content block's is_error (KeepToolResults only, toolresult.go)
	fResultContent // a content block's content
	fResultPart    // an element of it
	fPartType
	fPartText
	fHookID
	fHookName
	fHookEvent
	fHookExitCode
	fHookOutcome
	fMCPServers
	fMCPServer
	fMCPName
	fMCPStatus
)

func keyField(c ctx, key []byte) field {
	switch c {
	case ctxTop:
		switch string(key) {
		case "type":
			return fType
		case "subtype":
			return fSubtype
		case "session_id":
			return fSessionID
		case "parent_tool_use_id":
			return fParentToolUseID
		case "model":
			return fModel
		case "is_error":
			return fIsError
		case "result":
			return fResult
		case "api_error_status":
			return fAPIErrorStatus
		case "errors":
			return fErrors
		case "terminal_reason":
			return fTerminalReason
		case "total_cost_usd":
			return fTotalCost
		case "usage":
			return fUsage
		case "modelUsage":
			return fModelUsage
		case "attempt":
			return fAttempt
		case "max_retries":
			return fMaxRetries
		case "retry_delay_ms":
			return fRetryDelay
		case "error_status":
			return fErrorStatus
		case "error":
			return fError
		case "rate_limit_info":
			return fRateLimit
		case "event":
			return fEvent
		case "message":
			return fMessage
		case "claude_code_version":
			return fVersion
		case "task_id":
			return fTaskID
		case "tool_use_id":
			return fToolUseID
		case "status":
			return fStatus
		case "task_type":
			return fTaskType
		case "description":
			return fDescription
		case "output_file":
			return fOutputFile
		case "summary":
			return fSummary
		case "is_backgrounded":
			return fBackgrounded
		case "tasks":
			return fTasks
		case "patch":
			return fPatch
		case "origin":
			return fOrigin
		case "hook_id":
			return fHookID
		case "hook_name":
			return fHookName
		case "hook_event":
			return fHookEvent
		case "exit_code":
			return fHookExitCode
		case "outcome":
			return fHookOutcome
		case "mcp_servers":
			return fMCPServers
		}
	case ctxMessage:
		switch string(key) {
		case "model":
			return fModel
		case "usage":
			return fUsage
		case "content":
			return fContent
		}
	case ctxUsage:
		switch string(key) {
		case "input_tokens":
			return fInputTokens
		case "output_tokens":
			return fOutputTokens
		case "cache_creation_input_tokens":
			return fCacheCreation
		case "cache_read_input_tokens":
			return fCacheRead
		}
	case ctxBlock:
		switch string(key) {
		case "type":
			return fBlockType
		case "id":
			return fBlockID
		case "name":
			return fBlockName
		case "input":
			return fBlockInput
		case "text":
			return fBlockText
		case "tool_use_id":
			return fBlockToolUseID
		}
	case ctxModelUsage:
		return fModelEntry
	case ctxModelEntry:
		if string(key) == "contextWindow" {
			return fContextWindow
		}
	case ctxRateLimit:
		switch string(key) {
		case "status":
			return fRLStatus
		case "rateLimitType":
			return fRLType
		case "resetsAt":
			return fRLResetsAt
		case "errorCode":
			return fRLErrorCode
		}
	case ctxTask:
		switch string(key) {
		case "task_id":
			return fTaskItemID
		case "task_type":
			return fTaskItemType
		case "description":
			return fTaskItemDesc
		case "status":
			return fTaskItemStatus
		}
	case ctxPatch:
		if string(key) == "status" {
			return fStatus // task_updated carries the new status here
		}
	case ctxOrigin:
		if string(key) == "kind" {
			return fOriginKind
		}
	case ctxMCPServer:
		switch string(key) {
		case "name":
			return fMCPName
		case "status":
			return fMCPStatus
		}
	case ctxEvent:
		if string(key) == "type" {
			return fEventType
		}
	}
	return fNone
}

func elemField(c ctx) field {
	switch c {
	case ctxContent:
		return fBlock
	case ctxErrors:
		return fErrorItem
	case ctxTasks:
		return fTask
	case ctxResultContent:
		return fResultPart
	case ctxMCPServers:
		return fMCPServer
	}
	return fNone
}

// childCtx is the context of a container that is the value of f. A kept
// field holding a container of the wrong shape is skipped, not an error:
// the CLI's output format drifts between versions.
func childCtx(f field, arr bool) ctx {
	if arr {
		switch f {
		case fContent:
			return ctxContent
		case fErrors:
			return ctxErrors
		case fTasks:
			return ctxTasks
		case fResultContent:
			return ctxResultContent
		case fMCPServers:
			return ctxMCPServers
		}
		return ctxSkip
	}
	switch f {
	case fMessage:
		return ctxMessage
	case fUsage:
		return ctxUsage
	case fBlock:
		return ctxBlock
	case fModelUsage:
		return ctxModelUsage
	case fModelEntry:
		return ctxModelEntry
	case fRateLimit:
		return ctxRateLimit
	case fEvent:
		return ctxEvent
	case fTask:
		return ctxTask
	case fPatch:
		return ctxPatch
	case fOrigin:
		return ctxOrigin
	case fBlockInput:
		return ctxInput
	case fResultPart:
		return ctxResultPart
	case fMCPServer:
		return ctxMCPServer
	}
	return ctxSkip
}

// stringCap is how much of a string value of f is kept; 0 means skip it.
func (d *Decoder) stringCap(f field) int {
	switch f {
	case fResult:
		return MaxResultBytes
	case fBlockText:
		return MaxTextBytes
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
		fRLStatus, fRLType, fRLErrorCode, fEventType, fBlockType, fBlockID, fBlockName, fBlockToolUseID,
		fVersion, fTaskID, fToolUseID, fStatus, fTaskType, fOutputFile, fSummary, fOriginKind, fPartType,
		fHookID, fHookName, fHookEvent, fHookOutcome:
		return MaxShortBytes
	}
	return 0
}

func (d *Decoder) setString(f field, s string, trunc bool) {
	ev, b := &d.ev, &d.blk
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
	case fRLErrorCode:
		ev.RateLimitErrorCode = s
	case fVersion:
		ev.ClaudeCodeVersion = s
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
