package stream

// keyField is the field a key names in context c (fNone: a key nobody
// keeps). One function per container, so each stays a readable table.
func keyField(c ctx, key []byte) field {
	switch c {
	case ctxTop:
		return topKey(key)
	case ctxMessage:
		return messageKey(key)
	case ctxUsage:
		return usageKey(key)
	case ctxBlock:
		return blockKey(key)
	case ctxModelUsage:
		return fModelEntry
	case ctxModelEntry:
		return modelEntryKey(key)
	case ctxRateLimit:
		return rateLimitKey(key)
	case ctxTask:
		return taskKey(key)
	case ctxPatch:
		return patchKey(key)
	case ctxOrigin:
		return originKey(key)
	case ctxMCPServer:
		return mcpServerKey(key)
	case ctxNoResponse:
		switch string(key) {
		case "waited_ms":
			return fNoResponseWaited
		case "retry_wait_ms":
			return fNoResponseRetryWait
		}
	case ctxConfigFile:
		switch string(key) {
		case "path":
			return fConfigPath
		case "is_global":
			return fConfigGlobal
		case "backup_path":
			return fConfigBackup
		}
	case ctxEvent:
		return eventKey(key)
	case ctxEventBlock:
		switch string(key) {
		case "type":
			return fEventBlockType
		case "name":
			return fEventBlockName
		}
	case ctxEventDelta:
		if string(key) == "type" {
			return fEventDeltaType
		}
	}
	return fNone
}

func topKey(key []byte) field {
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
	case "api_error":
		return fAPIError
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
	return outcomeKey(key)
}

// outcomeKey: the top-level keys that bear on how a turn or a run ended
// (docs/design.md §F37), apart so that topKey stays a readable table.
func outcomeKey(key []byte) field {
	switch string(key) {
	case "num_turns":
		return fNumTurns
	case "result_index":
		return fResultIndex
	case "queued_turn_count":
		return fQueuedTurns
	case "resume_reason":
		return fResumeReason
	case "api_error_code":
		return fAPIErrorCode
	case "startup_failure_reason":
		return fStartupFailure
	case "invalid_config_file":
		return fConfigFile
	case "no_response":
		return fNoResponse
	case "reason":
		return fReason
	case "state":
		return fSessionState
	}
	return fNone
}

func messageKey(key []byte) field {
	switch string(key) {
	case "model":
		return fModel
	case "usage":
		return fUsage
	case "content":
		return fContent
	}
	return fNone
}

func usageKey(key []byte) field {
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
	return fNone
}

func blockKey(key []byte) field {
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
	return fNone
}

func modelEntryKey(key []byte) field {
	if string(key) == "contextWindow" {
		return fContextWindow
	}
	return fNone
}

func rateLimitKey(key []byte) field {
	switch string(key) {
	case "status":
		return fRLStatus
	case "rateLimitType":
		return fRLType
	case "resetsAt":
		return fRLResetsAt
	case "errorCode":
		return fRLErrorCode
	case "isUsingOverage":
		return fRLUsingOverage
	}
	return fNone
}

func taskKey(key []byte) field {
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
	return fNone
}

func patchKey(key []byte) field {
	switch string(key) {
	case "status":
		return fStatus // task_updated carries the new status here
	case "error":
		return fSummary // and why it failed ("Agent stalled: ...", §F35)
	}
	return fNone
}

func originKey(key []byte) field {
	if string(key) == "kind" {
		return fOriginKind
	}
	return fNone
}

func mcpServerKey(key []byte) field {
	switch string(key) {
	case "name":
		return fMCPName
	case "status":
		return fMCPStatus
	}
	return fNone
}

// eventKey: a stream_event's event, of which the stream's phase is read
// (what kind of block the model is writing, and which tool's input).
func eventKey(key []byte) field {
	switch string(key) {
	case "type":
		return fEventType
	case "content_block":
		return fEventBlock
	case "delta":
		return fEventDelta
	}
	return fNone
}
