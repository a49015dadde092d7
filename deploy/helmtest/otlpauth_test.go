// Copyright The otelcol-llmops Authors
// SPDX-License-Identifier: Apache-2.0

package helmtest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// The OTLP receivers with otlpReceiver.tls and otlpReceiver.auth: the ci/
// values file turning both on with the gateway, which tests/e2e's
// TestChartConfigsValidate also runs through `otelcol-llmops validate`.
const otlpSecurityValues = "deploy/helm/otelcol-llmops/ci/gateway-on-otlp-tls-auth-values.yaml"

const (
	tlsDir  = "/var/run/secrets/otelcol-llmops/otlp-tls"
	authDir = "/var/run/secrets/otelcol-llmops/otlp-auth"
)

// checkReceiverSecurity: both protocols of the otlp receiver authenticate
// with bearertokenauth/otlp (when auth) and serve the Secret's certificate
// (when tls), and the extension is defined, reads the mounted token file and
// is started.
func checkReceiverSecurity(t *testing.T, what string, cfg map[string]any, tls, auth bool) {
	t.Helper()
	for _, proto := range []string{"grpc", "http"} {
		p := Get(cfg, "receivers", "otlp", "protocols", proto)
		if p == nil {
			t.Fatalf("%s: no otlp %s protocol", what, proto)
		}
		got := Get(p, "auth", "authenticator")
		if auth && got != "bearertokenauth/otlp" {
			t.Errorf("%s: otlp %s auth %v, want {authenticator: bearertokenauth/otlp}", what, proto, Get(p, "auth"))
		}
		if !auth && Get(p, "auth") != nil {
			t.Errorf("%s: otlp %s has auth %v without otlpReceiver.auth", what, proto, Get(p, "auth"))
		}
		if tls {
			if Get(p, "tls", "cert_file") != tlsDir+"/tls.crt" || Get(p, "tls", "key_file") != tlsDir+"/tls.key" {
				t.Errorf("%s: otlp %s tls %v, want the mounted Secret's tls.crt and tls.key", what, proto, Get(p, "tls"))
			}
			if Get(p, "tls", "reload_interval") == nil {
				t.Errorf("%s: otlp %s tls does not reload the certificate", what, proto)
			}
		} else if Get(p, "tls") != nil {
			t.Errorf("%s: otlp %s has tls %v without otlpReceiver.tls", what, proto, Get(p, "tls"))
		}
	}
	ext := Get(cfg, "extensions", "bearertokenauth/otlp")
	started := slices.Contains(strs(Get(cfg, "service", "extensions")), "bearertokenauth/otlp")
	if !auth {
		if ext != nil || started {
			t.Errorf("%s: bearertokenauth/otlp configured without otlpReceiver.auth", what)
		}
		return
	}
	// A file, not an inline token: the extension watches it, and the token
	// never appears in the ConfigMap.
	if Get(ext, "filename") != authDir+"/token" || Get(ext, "token") != nil {
		t.Errorf("%s: bearertokenauth/otlp %v, want filename %s/token", what, ext, authDir)
	}
	if !started {
		t.Errorf("%s: bearertokenauth/otlp not in service.extensions %v", what, Get(cfg, "service", "extensions"))
	}
}

// checkSecretVolumes: the pod mounts the Secrets where the configuration
// reads them, read-only.
func checkSecretVolumes(t *testing.T, what string, pod, ctr map[string]any, tlsSecret, authSecret, authKey string) {
	t.Helper()
	vols := map[string]any{}
	for _, v := range list(pod["volumes"]) {
		vols[fmt.Sprint(Get(v, "name"))] = v
	}
	mounts := map[string]any{}
	for _, m := range list(ctr["volumeMounts"]) {
		mounts[fmt.Sprint(Get(m, "name"))] = m
	}
	for name, want := range map[string]struct{ secret, dir string }{"otlp-tls": {tlsSecret, tlsDir}, "otlp-auth": {authSecret, authDir}} {
		if want.secret == "" {
			if vols[name] != nil || mounts[name] != nil {
				t.Errorf("%s: volume %s without its value", what, name)
			}
			continue
		}
		if got := Get(vols[name], "secret", "secretName"); got != want.secret {
			t.Errorf("%s: volume %s from Secret %v, want %s", what, name, got, want.secret)
		}
		if Get(mounts[name], "mountPath") != want.dir || Get(mounts[name], "readOnly") != true || Get(mounts[name], "subPath") != nil {
			t.Errorf("%s: mount %v, want %s read-only without subPath (a subPath mount never sees the Secret change)", what, mounts[name], want.dir)
		}
	}
	if authSecret != "" {
		items := list(Get(vols["otlp-auth"], "secret", "items"))
		if len(items) != 1 || Get(items[0], "key") != authKey || Get(items[0], "path") != "token" {
			t.Errorf("%s: otlp-auth items %v, want the key %s as the file token", what, items, authKey)
		}
	}
}

func TestOTLPReceiverTLSAndAuth(t *testing.T) {
	r := render(t, otlpSecurityValues)
	checkReceiverSecurity(t, "agent", r.agent, true, true)
	if r.gw == nil {
		t.Fatal("no gateway configuration rendered")
	}
	checkReceiverSecurity(t, "gateway", r.gw, true, true)

	// The agents send the token to the gateway, over TLS verified with the
	// Secret's CA.
	gw := Get(r.agent, "exporters", "otlp_grpc/gateway")
	if Get(gw, "auth", "authenticator") != "bearertokenauth/gateway" {
		t.Errorf("otlp_grpc/gateway auth %v, want {authenticator: bearertokenauth/gateway}", Get(gw, "auth"))
	}
	if Get(gw, "tls", "insecure") == true || Get(gw, "tls", "ca_file") != tlsDir+"/ca.crt" {
		t.Errorf("otlp_grpc/gateway tls %v, want ca_file %s/ca.crt", Get(gw, "tls"), tlsDir)
	}
	if Get(r.agent, "extensions", "bearertokenauth/gateway", "filename") != authDir+"/token" {
		t.Errorf("bearertokenauth/gateway %v", Get(r.agent, "extensions", "bearertokenauth/gateway"))
	}
	if !slices.Contains(strs(Get(r.agent, "service", "extensions")), "bearertokenauth/gateway") {
		t.Errorf("bearertokenauth/gateway not in service.extensions %v", Get(r.agent, "service", "extensions"))
	}

	pod, ctr := daemonSetContainer(t, r.objs)
	checkSecretVolumes(t, "DaemonSet", pod, ctr, "otelcol-llmops-otlp-tls", "otelcol-llmops-otlp-token", "token")
	dep := one(t, r.objs, "Deployment")
	gpod, _ := Get(dep, "spec", "template", "spec").(map[string]any)
	gctr, _ := Get(gpod, "containers", 0).(map[string]any)
	checkSecretVolumes(t, "gateway Deployment", gpod, gctr, "otelcol-llmops-otlp-tls", "otelcol-llmops-otlp-token", "token")
}

func TestOTLPReceiverAuthAlone(t *testing.T) {
	// Auth without TLS and without the gateway, with another key: the
	// agents' receiver only, no client authenticator.
	r := render(t, "deploy/helm/otelcol-llmops/ci/defaults-values.yaml",
		"--set", "otlpReceiver.auth.enabled=true", "--set", "otlpReceiver.auth.secretName=apps-token", "--set", "otlpReceiver.auth.secretKey=otlp")
	checkReceiverSecurity(t, "agent", r.agent, false, true)
	if Get(r.agent, "extensions", "bearertokenauth/gateway") != nil {
		t.Error("bearertokenauth/gateway without the gateway")
	}
	pod, ctr := daemonSetContainer(t, r.objs)
	checkSecretVolumes(t, "DaemonSet", pod, ctr, "", "apps-token", "otlp")

	// The defaults: neither.
	d := render(t, "deploy/helm/otelcol-llmops/ci/defaults-values.yaml")
	checkReceiverSecurity(t, "agent (defaults)", d.agent, false, false)
	pod, ctr = daemonSetContainer(t, d.objs)
	checkSecretVolumes(t, "DaemonSet (defaults)", pod, ctr, "", "", "")
}

// TestOTLPSecurityMisconfigured: what cannot work fails the rendering and
// names the value to set.
func TestOTLPSecurityMisconfigured(t *testing.T) {
	for name, c := range map[string]struct {
		set  []string
		want string
	}{
		"auth without a secret": {[]string{"otlpReceiver.auth.enabled=true"}, "otlpReceiver.auth.enabled needs otlpReceiver.auth.secretName"},
		"tls without a secret":  {[]string{"otlpReceiver.tls.enabled=true"}, "otlpReceiver.tls.enabled needs otlpReceiver.tls.secretName"},
		"gateway auth in plaintext": {
			[]string{"gateway.enabled=true", "otlpReceiver.auth.enabled=true", "otlpReceiver.auth.secretName=t"},
			"needs otlpReceiver.tls.enabled (and gateway.insecure=false)",
		},
		"gateway tls, agents plaintext": {
			[]string{"gateway.enabled=true", "otlpReceiver.tls.enabled=true", "otlpReceiver.tls.secretName=c"},
			"set gateway.insecure=false",
		},
	} {
		t.Run(name, func(t *testing.T) {
			var args []string
			for _, s := range c.set {
				args = append(args, "--set", s)
			}
			_, err := Template(t, args...)
			if err == nil {
				t.Fatalf("rendered with %v", c.set)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error does not say %q:\n%v", c.want, err)
			}
		})
	}
}
