package endpoint

import (
	"net/netip"
	"strconv"
	"strings"
)

// The CLI's runtime parses hosts as the WHATWG URL standard does: a host
// whose last label is a number is an IPv4 address in any of the forms
// inet_aton took (127.1, 2130706433, 0x7f000001, 0177.0.0.1), and Node
// connects to it (measured on 2.1.332, FIELD.md). Go's
// resolver calls those names and finds none, so the look must read them as
// the CLI does (issue 31).

// whatwgIPv4 reads host as the WHATWG host parser reads an IPv4 address.
// numeric reports that the host ends in a number, so that it is an IPv4
// address or invalid (ok false: the CLI cannot use it either); a host
// that does not end in a number is a name (numeric false).
func whatwgIPv4(host string) (addr netip.Addr, numeric, ok bool) {
	parts := strings.Split(host, ".")
	if parts[len(parts)-1] == "" && len(parts) > 1 {
		parts = parts[:len(parts)-1] // one trailing dot is allowed
	}
	if _, isNum := ipv4Part(parts[len(parts)-1]); !isNum && !allDigits(parts[len(parts)-1]) {
		return netip.Addr{}, false, false
	}
	if len(parts) > 4 {
		return netip.Addr{}, true, false
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		n, valid := ipv4Part(p)
		if !valid {
			return netip.Addr{}, true, false
		}
		nums[i] = n
	}
	for _, n := range nums[:len(nums)-1] {
		if n > 255 {
			return netip.Addr{}, true, false
		}
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-len(nums))) {
		return netip.Addr{}, true, false
	}
	v := last
	for i, n := range nums[:len(nums)-1] {
		v += n << (8 * (3 - i))
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true, true
}

// ipv4Part parses one part: 0x or 0X then hex, 0 then octal, else
// decimal; an empty hex part ("0x") is 0, as the standard says.
func ipv4Part(p string) (uint64, bool) {
	if p == "" || len(p) > 40 {
		return 0, false
	}
	base, digits := 10, p
	switch {
	case len(p) >= 2 && (p[:2] == "0x" || p[:2] == "0X"):
		base, digits = 16, p[2:]
		if digits == "" {
			return 0, true
		}
	case len(p) >= 2 && p[0] == '0':
		base, digits = 8, p[1:]
	}
	n, err := strconv.ParseUint(digits, base, 64)
	if err != nil {
		return 0, false
	}
	return n, true
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
