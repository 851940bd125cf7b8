package gate_test

import (
	"strings"
	"testing"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/gate"
)

func TestPairingCodes(t *testing.T) {
	seen := map[string]bool{}
	for range 2000 {
		code, hash := gate.NewPairingCode()
		if len(code) != gate.PairingLen || string(hash) != string(gate.Hash(code)) {
			t.Fatalf("code %q", code)
		}
		for _, r := range code {
			if !strings.ContainsRune(gate.PairingAlphabet, r) {
				t.Fatalf("code %q holds %q, not of the alphabet", code, r)
			}
		}
		seen[code] = true
		got, err := gate.ParsePairingCode(strings.ToLower(gate.FormatPairingCode(code)))
		if err != nil || got != code {
			t.Fatalf("ParsePairingCode(lower(%s)) = %q, %v", gate.FormatPairingCode(code), got, err)
		}
	}
	if len(seen) < 1999 {
		t.Errorf("%d distinct codes of 2000", len(seen))
	}
	for _, r := range "0O1IL" {
		if strings.ContainsRune(gate.PairingAlphabet, r) {
			t.Errorf("the alphabet holds the look-alike %q", r)
		}
	}
	for _, bad := range []string{"", "ABCD-EFG", "ABCD-EFGHJ", "ABCD_EFGH", "0BCD-EFGH", "ABCD-EFGI", "ＡBCD-EFGH", strings.Repeat("A", 70)} {
		if _, err := gate.ParsePairingCode(bad); ask.ErrorCode(err) != ask.ERequestInvalid {
			t.Errorf("ParsePairingCode(%q): %v, want request.invalid", bad, err)
		}
	}
	for _, ok := range []string{"abcd efgh", " ABCD-EFGH ", "AB-CD-EF-GH", "abcdefgh"} {
		if got, err := gate.ParsePairingCode(ok); err != nil || got != "ABCDEFGH" {
			t.Errorf("ParsePairingCode(%q) = %q, %v", ok, got, err)
		}
	}
}

func TestInviteCodes(t *testing.T) {
	code, _ := gate.NewSecret(gate.InvitePrefix)
	if got, err := gate.ParseInviteCode(" " + code + " "); err != nil || got != code {
		t.Fatalf("ParseInviteCode(%q) = %q, %v", code, got, err)
	}
	for _, bad := range []string{"", code[:len(code)-1], code + "A", "lb_" + code[6:], strings.Replace(code, code[10:11], "!", 1), "lb_iv_" + strings.Repeat("é", 43)} {
		if _, err := gate.ParseInviteCode(bad); ask.ErrorCode(err) != ask.ERequestInvalid {
			t.Errorf("ParseInviteCode(%q): %v, want request.invalid", bad, err)
		}
	}
}

func TestDeviceName(t *testing.T) {
	for in, want := range map[string]string{
		"":                      "a device",
		"  iPhone \n Safari ":   "iPhone Safari",
		"\xff\xfe":              "a device",
		strings.Repeat("x", 90): strings.Repeat("x", gate.MaxDeviceRunes-1) + "…",
	} {
		if got := gate.DeviceName(in); got != want {
			t.Errorf("DeviceName(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzParsePairingCode: whatever is typed, the parser either refuses it as request.invalid or
// returns exactly PairingLen characters of the alphabet, which parse again to themselves.
func FuzzParsePairingCode(f *testing.F) {
	for _, s := range []string{"ABCD-EFGH", "abcd efgh", "", "0000-0000", "ÄBCD-EFGH", "AB\x00CD-EFGH", strings.Repeat("-", 64)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := gate.ParsePairingCode(s)
		if err != nil {
			if ask.ErrorCode(err) != ask.ERequestInvalid {
				t.Fatalf("ParsePairingCode(%q): %v, want request.invalid", s, err)
			}
			return
		}
		if len(got) != gate.PairingLen {
			t.Fatalf("ParsePairingCode(%q) = %q", s, got)
		}
		for _, r := range got {
			if !strings.ContainsRune(gate.PairingAlphabet, r) {
				t.Fatalf("ParsePairingCode(%q) = %q, which holds %q", s, got, r)
			}
		}
		if again, err := gate.ParsePairingCode(gate.FormatPairingCode(got)); err != nil || again != got {
			t.Fatalf("not stable: %q → %q → %q, %v", s, got, again, err)
		}
	})
}

// FuzzParseInviteCode: an accepted code is always the prefix and 43 base64url characters.
func FuzzParseInviteCode(f *testing.F) {
	code, _ := gate.NewSecret(gate.InvitePrefix)
	for _, s := range []string{code, "", "lb_iv_", "lb_iv_" + strings.Repeat("A", 43)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := gate.ParseInviteCode(s)
		if err != nil {
			if ask.ErrorCode(err) != ask.ERequestInvalid {
				t.Fatalf("ParseInviteCode(%q): %v", s, err)
			}
			return
		}
		if !strings.HasPrefix(got, gate.InvitePrefix) || len(got) != len(gate.InvitePrefix)+43 {
			t.Fatalf("ParseInviteCode(%q) = %q", s, got)
		}
	})
}
