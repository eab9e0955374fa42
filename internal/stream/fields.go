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
	ctxEventBlock    // .event.content_block (a stream_event's content_block_start)
	ctxEventDelta    // .event.delta (a stream_event's content_block_delta)
	ctxTasks         // .tasks
	ctxTask          // .tasks[i]
	ctxPatch         // .patch
	ctxOrigin        // .origin
	ctxInput         // .message.content[i].input, when an object
	ctxResultContent // .message.content[i].content, when an array (KeepToolResults only)
	ctxResultPart    // .message.content[i].content[j]
	ctxMCPServers    // .mcp_servers (init)
	ctxMCPServer     // .mcp_servers[i]
	ctxNoResponse    // .no_response (api_retry, 2.1.332)
	ctxConfigFile    // .invalid_config_file (a start-up failure's result, 2.1.332)
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
	fEventBlock
	fEventBlockType
	fEventBlockName
	fEventDelta
	fEventDeltaType
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
	fRLUsingOverage // rate_limit_info.isUsingOverage
	fAPIError       // a result's or assistant line's api_error (2.1.332)
	fResultIsError  // a content block's is_error (KeepToolResults only, toolresult.go)
	fResultContent  // a content block's content
	fResultPart     // an element of it
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
	fNumTurns            // a result's num_turns
	fResultIndex         // a result's result_index (2.1.332)
	fQueuedTurns         // a result's queued_turn_count (2.1.332)
	fResumeReason        // a result's resume_reason (2.1.332)
	fAPIErrorCode        // a result's or assistant line's api_error_code (2.1.332)
	fStartupFailure      // a result's startup_failure_reason (2.1.332)
	fConfigFile          // a result's invalid_config_file
	fConfigPath          // its path
	fConfigGlobal        // its is_global
	fConfigBackup        // its backup_path
	fNoResponse          // api_retry's no_response
	fNoResponseWaited    // its waited_ms
	fNoResponseRetryWait // its retry_wait_ms
	fReason              // a system line's reason (turn_preempted, worker_shutting_down)
	fSessionState        // session_state_changed's state
)

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
	case fEventBlock:
		return ctxEventBlock
	case fEventDelta:
		return ctxEventDelta
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
	case fNoResponse:
		return ctxNoResponse
	case fConfigFile:
		return ctxConfigFile
	}
	return ctxSkip
}
