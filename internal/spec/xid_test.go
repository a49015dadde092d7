// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package spec

import "testing"

func TestXIDCatalogueIsWellFormed(t *testing.T) {
	all := XIDs()
	if len(all) == 0 {
		t.Fatal("empty XID catalogue")
	}
	forms := map[string]bool{"none": true, "restart_app": true, "reset_gpu": true, "reboot_node": true}
	for i, x := range all {
		if i > 0 && all[i-1].Code >= x.Code {
			t.Errorf("XID %d after %d: the table must be sorted with unique codes", x.Code, all[i-1].Code)
		}
		if x.Name == "" || x.Action == "" {
			t.Errorf("XID %d: every entry needs a name and an action", x.Code)
		}
		if !forms[x.Recovery.String()] {
			t.Errorf("XID %d: recovery %q is not one of the four forms", x.Code, x.Recovery)
		}
		got, ok := LookupXID(x.Code)
		if !ok || got != x {
			t.Errorf("LookupXID(%d) = %+v, %v; want %+v", x.Code, got, ok, x)
		}
	}
	// The table is the copy XIDs returns: changing it changes nothing.
	all[0].Name = "changed"
	if XIDs()[0].Name == "changed" {
		t.Error("callers could modify the catalogue through XIDs()")
	}
}

func TestXIDRecovery(t *testing.T) {
	want := map[XIDRecovery]struct {
		s     string
		reset bool
	}{
		XIDRecoveryNone:       {"none", false},
		XIDRecoveryRestartApp: {"restart_app", false},
		XIDRecoveryResetGPU:   {"reset_gpu", true},
		XIDRecoveryRebootNode: {"reboot_node", true},
	}
	for r, w := range want {
		if r.String() != w.s || r.NeedsReset() != w.reset {
			t.Errorf("%d: String %q NeedsReset %v, want %q %v", r, r.String(), r.NeedsReset(), w.s, w.reset)
		}
	}
	a, ok := LookupAttribute(AttrHwGpuXidRecovery)
	if !ok || len(a.Values) != len(want) {
		t.Fatalf("%s: %+v, %v; want the four recovery forms as values", AttrHwGpuXidRecovery, a, ok)
	}
	for i, v := range a.Values {
		if v != XIDRecovery(i).String() {
			t.Errorf("%s value %d = %q, want %q", AttrHwGpuXidRecovery, i, v, XIDRecovery(i))
		}
	}
	if _, ok := lookupIncidentField(AttrHwGpuXidRecovery); !ok {
		t.Errorf("%s is not an incident record field", AttrHwGpuXidRecovery)
	}
}

func TestXIDClasses(t *testing.T) {
	for code, want := range map[int64]XIDRecovery{
		13: XIDRecoveryRestartApp, // application fault
		31: XIDRecoveryRestartApp,
		43: XIDRecoveryRestartApp,
		45: XIDRecoveryNone,       // follows other errors
		48: XIDRecoveryResetGPU,   // double-bit ECC
		63: XIDRecoveryNone,       // remap recorded, applied at the next reset
		79: XIDRecoveryRebootNode, // fallen off the bus
		94: XIDRecoveryRestartApp, // contained ECC: the application dies, the reset can wait
		95: XIDRecoveryResetGPU,   // uncontained ECC
	} {
		x, ok := LookupXID(code)
		if !ok {
			t.Errorf("XID %d missing from the catalogue", code)
			continue
		}
		if x.Recovery != want {
			t.Errorf("XID %d: recovery %s, want %s", code, x.Recovery, want)
		}
	}
	for _, code := range []int64{0, -1, 1, 61, 9999} {
		if x, ok := LookupXID(code); ok {
			t.Errorf("LookupXID(%d) = %+v, true; want false", code, x)
		}
	}
}
