package ui

import (
	"testing"
	"time"
)

func TestFormats(t *testing.T) {
	tests := []struct{ got, want string }{
		{Tokens(999), "999"},
		{Tokens(12_345), "12.3k"},
		{Tokens(200_000), "200k"},
		{Tokens(1_000_000), "1M"},
		{Tokens(1_500_000), "1.5M"},
		{Occupancy(126_000, 200_000), "63% of 200k"},
		{Occupancy(12_345, 0), "12.3k tokens"},
		{Cost(0.0105), "$0.0105"},
		{Cost(12.345), "$12.35"},
		{Duration(4*time.Minute + 12400*time.Millisecond), "4m12s"},
		{Duration(250 * time.Millisecond), "250ms"},
		{Duration(-time.Second), "0s"},
		{ShortSession("5fcbbccf-06da-4fd6-8405-d704e7fbd2c7"), "5fcbbccf"},
		{Clean("echo \x1b[2J hi\r\n\tthere  ", 0), "echo [2J hi there"},
		{Clean("abcdef", 3), "abc…"},
		{fit("abcdef", 4), "abc…"},
		{fit("abcd", 4), "abcd"},
		{fit("日本語です", 5), "日本…"},
	}
	for i, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%d: got %q, want %q", i, tt.got, tt.want)
		}
	}
	if w := Width("日本a"); w != 5 {
		t.Errorf("Width = %d, want 5", w)
	}
}
