package supervisor

// The defaults the package's external tests (package supervisor_test)
// compare a configuration with.
const (
	DefaultSessionTimeout    = defaultSessionTimeout
	DefaultMaxAttempts       = defaultMaxAttempts
	DefaultContextThreshold  = defaultContextThreshold
	DefaultUnreachableWindow = defaultUnreachableWindow
)
