package endpoint

import "strings"

// ShouldProbe decides, for one api_retry line, whether malarun looks at the
// API's address itself: only before the run has talked to the API, and only
// for a failure without an HTTP status ("unknown": the CLI got no answer at
// all). A status (429, 5xx, 529) means the API answered: transient, or
// decided elsewhere (401: the auth stop, docs/design.md §D6).
func ShouldProbe(talked bool, status int, errName string) bool {
	return !talked && status == 0 && (errName == "unknown" || errName == "")
}

// Judge is the decision: a finding stops the run at once only if the run
// has never talked to the API. Once it has (an assistant message, a
// streamed reply, a successful result), the same failure means the network
// went away mid-run, and retrying is the right answer.
func Judge(talked bool, f Finding) bool { return !talked && f.Config() }

// resultScanBytes bounds how much of a result text is searched: the CLI's
// error texts are short, and a result can be a megabyte of the model's text.
const resultScanBytes = 4 << 10

// knownCodes are the error codes the CLI puts in parentheses in the text
// of its final error result ("API Error: ... (ENOTFOUND)"), the ones
// retrying cannot fix. EAI_AGAIN (a temporary DNS failure) and the reset,
// timeout and closed-socket codes are not here: those pass. A function, not
// a package variable (no package state); it is read only on an error path.
func knownCodes() map[string]Finding {
	selfSigned, expired, notYetValid, nameMismatch := certFindings()
	return map[string]Finding{
		"ENOTFOUND":         {Cause: NotFound, Code: "ENOTFOUND", What: "name not found"},
		"ECONNREFUSED":      {Cause: Refused, Code: "ECONNREFUSED", What: "connection refused"},
		"ConnectionRefused": {Cause: Refused, Code: "ECONNREFUSED", What: "connection refused"},
		"ENETUNREACH":       {Cause: NoRoute, Code: "ENETUNREACH", What: "network unreachable"},
		"ENETDOWN":          {Cause: NoRoute, Code: "ENETDOWN", What: "network down"},
		"EHOSTUNREACH":      {Cause: NoRoute, Code: "EHOSTUNREACH", What: "no route to host"},
		"EHOSTDOWN":         {Cause: NoRoute, Code: "EHOSTDOWN", What: "host down"},

		"DEPTH_ZERO_SELF_SIGNED_CERT":       selfSigned,
		"SELF_SIGNED_CERT_IN_CHAIN":         {Cause: Certificate, Code: "SELF_SIGNED_CERT_IN_CHAIN", What: "self-signed certificate in the chain"},
		"UNABLE_TO_VERIFY_LEAF_SIGNATURE":   {Cause: Certificate, Code: "UNABLE_TO_VERIFY_LEAF_SIGNATURE", What: "certificate not trusted"},
		"UNABLE_TO_GET_ISSUER_CERT_LOCALLY": {Cause: Certificate, Code: "UNABLE_TO_GET_ISSUER_CERT_LOCALLY", What: "certificate not trusted"},
		"UNABLE_TO_GET_ISSUER_CERT":         {Cause: Certificate, Code: "UNABLE_TO_GET_ISSUER_CERT", What: "certificate not trusted"},
		"CERT_HAS_EXPIRED":                  expired,
		"CERT_NOT_YET_VALID":                notYetValid,
		"CERT_REVOKED":                      {Cause: Certificate, Code: "CERT_REVOKED", What: "certificate revoked"},
		"CERT_SIGNATURE_FAILURE":            {Cause: Certificate, Code: "CERT_SIGNATURE_FAILURE", What: "certificate signature invalid"},
		"ERR_TLS_CERT_ALTNAME_INVALID":      nameMismatch,
		"HOSTNAME_MISMATCH":                 nameMismatch,
	}
}

// certFindings are the certificate findings that both a code and a phrase name.
func certFindings() (selfSigned, expired, notYetValid, nameMismatch Finding) {
	return Finding{Cause: Certificate, Code: "DEPTH_ZERO_SELF_SIGNED_CERT", What: "self-signed certificate"},
		Finding{Cause: Certificate, Code: "CERT_HAS_EXPIRED", What: "certificate expired"},
		Finding{Cause: Certificate, Code: "CERT_NOT_YET_VALID", What: "certificate not yet valid"},
		Finding{Cause: Certificate, Code: "ERR_TLS_CERT_ALTNAME_INVALID", What: "certificate does not name the host"}
}

// certPhrase is a certificate text 2.1.197 prints without a code.
type certPhrase struct {
	text string
	f    Finding
}

// certPhrases: "API Error: Unable to connect to API: Self-signed
// certificate detected. Check your proxy or corporate SSL certificates".
func certPhrases() []certPhrase {
	selfSigned, expired, notYetValid, nameMismatch := certFindings()
	return []certPhrase{
		{"Self-signed certificate detected", selfSigned},
		{"SSL certificate has expired", expired},
		{"SSL certificate is not yet valid", notYetValid},
		{"SSL certificate hostname mismatch", nameMismatch},
	}
}

// Known is the finding of a code retrying cannot fix ("ENOTFOUND",
// "ECONNREFUSED", a certificate code), as a probe would report it; false
// for any other code.
func Known(code string) (Finding, bool) {
	f, ok := knownCodes()[code]
	return f, ok
}

// FromResultText reads the text of an error result the CLI printed when it
// gave up: "API Error: Can't reach the API server — check your internet or
// DNS (ENOTFOUND)". Only the CLI's own "API Error:" texts are read, and only
// a code in parentheses or one of the CLI's fixed certificate phrases
// counts, so a model's words cannot trigger it. The Finding holds
// malarun's words for the code, never the text itself.
func FromResultText(text string) Finding {
	if len(text) > resultScanBytes {
		text = text[:resultScanBytes]
	}
	rest, ok := strings.CutPrefix(text, "API Error:")
	if !ok {
		return Finding{}
	}
	for rest != "" {
		open := strings.IndexByte(rest, '(')
		if open < 0 {
			break
		}
		rest = rest[open+1:]
		end := strings.IndexByte(rest, ')')
		if end < 0 {
			break
		}
		if f, ok := knownCodes()[rest[:end]]; ok {
			f.FromCLI = true
			return f
		}
	}
	for _, p := range certPhrases() {
		if strings.Contains(text, p.text) {
			f := p.f
			f.FromCLI = true
			return f
		}
	}
	return Finding{}
}
