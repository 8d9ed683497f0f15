package deploy

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// manifest is the part of a Kubernetes object the test looks at.
type manifest struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	StringData map[string]string `yaml:"stringData"`
	Spec       struct {
		Replicas *int              `yaml:"replicas"`
		Selector map[string]any    `yaml:"selector"`
		Template *podTemplate      `yaml:"template"`
		Ports    []map[string]any  `yaml:"ports"`
		Labels   map[string]string `yaml:"labels"`
	} `yaml:"spec"`
}

type podTemplate struct {
	Metadata struct {
		Labels map[string]string `yaml:"labels"`
	} `yaml:"metadata"`
	Spec struct {
		Containers []struct {
			Name           string   `yaml:"name"`
			Image          string   `yaml:"image"`
			Args           []string `yaml:"args"`
			LivenessProbe  *probe   `yaml:"livenessProbe"`
			ReadinessProbe *probe   `yaml:"readinessProbe"`
			Env            []struct {
				Name      string `yaml:"name"`
				Value     string `yaml:"value"`
				ValueFrom *struct {
					SecretKeyRef struct {
						Name string `yaml:"name"`
						Key  string `yaml:"key"`
					} `yaml:"secretKeyRef"`
				} `yaml:"valueFrom"`
			} `yaml:"env"`
		} `yaml:"containers"`
	} `yaml:"spec"`
}

type probe struct {
	HTTPGet struct {
		Path string `yaml:"path"`
	} `yaml:"httpGet"`
}

func load(t *testing.T) map[string]manifest {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("kubernetes", "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	out := map[string]manifest{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		dec := yaml.NewDecoder(bytes.NewReader(b))
		for {
			var m manifest
			err := dec.Decode(&m)
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err, "%s is not well-formed YAML", f)
			require.NotEmpty(t, m.APIVersion, "%s: an object without apiVersion", f)
			require.NotEmpty(t, m.Kind, "%s: an object without kind", f)
			require.NotEmpty(t, m.Metadata.Name, "%s: a %s without a name", f, m.Kind)
			out[m.Kind+"/"+m.Metadata.Name] = m
		}
	}
	return out
}

func TestKubernetesManifests(t *testing.T) {
	objs := load(t)
	secret, ok := objs["Secret/scalein-db"]
	require.True(t, ok, "a Secret holds the database URL")
	assert.Contains(t, secret.StringData["url"], "postgres://")

	server, ok := objs["Deployment/scalein-server"]
	require.True(t, ok)
	worker, ok := objs["Deployment/scalein-worker"]
	require.True(t, ok)
	svc, ok := objs["Service/scalein"]
	require.True(t, ok)

	sc, wc := server.Spec.Template.Spec.Containers[0], worker.Spec.Template.Spec.Containers[0]
	assert.Equal(t, "serve", sc.Args[0])
	assert.Equal(t, "0", sc.Args[slices.Index(sc.Args, "-workers")+1], "the servers work no runs")
	assert.Equal(t, "worker", wc.Args[0])
	assert.Equal(t, sc.Image, wc.Image, "every process runs the same build (run ids include the model version)")
	for _, flag := range []string{"-run-timeout", "-rescue-after", "-max-run-memory"} {
		i, j := slices.Index(sc.Args, flag), slices.Index(wc.Args, flag)
		require.True(t, i > 0 && j > 0, "%s on both", flag)
		assert.Equal(t, sc.Args[i+1], wc.Args[j+1], "%s must match across processes", flag)
	}
	for _, c := range []string{"server", "worker"} {
		dep := objs["Deployment/scalein-"+c]
		found := false
		for _, e := range dep.Spec.Template.Spec.Containers[0].Env {
			if e.Name == "SCALEIN_DB" && e.ValueFrom != nil {
				assert.Equal(t, "scalein-db", e.ValueFrom.SecretKeyRef.Name)
				assert.Equal(t, "url", e.ValueFrom.SecretKeyRef.Key)
				found = true
			}
		}
		assert.True(t, found, "the %s reads SCALEIN_DB from the Secret", c)
		// The Deployment's selector matches its pods.
		labels := dep.Spec.Template.Metadata.Labels
		for k, v := range dep.Spec.Selector["matchLabels"].(map[string]any) {
			assert.Equal(t, v, labels[k], "%s selector %s", c, k)
		}
	}
	// Issue 19 M9: liveness must not depend on the database, or an outage restarts every pod.
	require.NotNil(t, sc.LivenessProbe)
	assert.Equal(t, "/livez", sc.LivenessProbe.HTTPGet.Path)
	require.NotNil(t, sc.ReadinessProbe)
	assert.Equal(t, "/healthz", sc.ReadinessProbe.HTTPGet.Path)
	// The Service reaches the server pods and not the workers.
	sel := map[string]string{}
	for k, v := range svc.Spec.Selector {
		sel[k] = v.(string)
	}
	matches := func(labels map[string]string) bool {
		for k, v := range sel {
			if labels[k] != v {
				return false
			}
		}
		return true
	}
	assert.True(t, matches(server.Spec.Template.Metadata.Labels))
	assert.False(t, matches(worker.Spec.Template.Metadata.Labels))
}

// TestOAuth2ProxyExample checks the sidecar example of docs/deploy.md ("Exposure"): serve
// listens on the loopback only and believes the user header from the loopback only; the
// sidecar's upstream is serve's address, its probes need no sign-in, and the Service reaches the
// sidecar, not serve.
func TestOAuth2ProxyExample(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("oauth2-proxy", "server.yaml"))
	require.NoError(t, err)
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var dep, svc manifest
	require.NoError(t, dec.Decode(&dep))
	require.NoError(t, dec.Decode(&svc))
	require.Equal(t, "Deployment", dep.Kind)
	require.Equal(t, "Service", svc.Kind)
	cs := dep.Spec.Template.Spec.Containers
	require.Len(t, cs, 2)
	serve, proxy := cs[0], cs[1]
	arg := func(args []string, flag string) string {
		i := slices.Index(args, flag)
		require.True(t, i >= 0 && i+1 < len(args), "%s is set", flag)
		return args[i+1]
	}
	assert.Equal(t, "127.0.0.1/32", arg(serve.Args, "-auth-proxy-addrs"))
	assert.Equal(t, "X-Forwarded-User", arg(serve.Args, "-auth-proxy-header"), "the header oauth2-proxy's --pass-user-headers sets")
	addr := ""
	for _, e := range serve.Env {
		if e.Name == "SCALEIN_ADDR" {
			addr = e.Value
		}
	}
	assert.Equal(t, "127.0.0.1:8080", addr, "serve listens on the loopback only")
	assert.Contains(t, proxy.Args, "--upstream=http://"+addr+"/")
	assert.Contains(t, proxy.Args, "--pass-user-headers=true")
	assert.Contains(t, proxy.Args, "--skip-auth-route=GET=^/healthz$", "the readiness probe has no session")
	assert.Equal(t, "http", svc.Spec.Ports[0]["targetPort"], "the Service reaches the sidecar's port")

	main := load(t)["Deployment/scalein-server"].Spec.Template.Spec.Containers[0]
	for _, flag := range []string{"-run-timeout", "-rescue-after", "-workers", "-max-run-memory", "-max-total-memory"} {
		assert.Equal(t, arg(main.Args, flag), arg(serve.Args, flag), "%s as in ../kubernetes/server.yaml", flag)
	}
	assert.Equal(t, main.Image, serve.Image)
	// Workers drive plans too, and a plan's runs count against its owner's quota: the workers
	// that run beside this server must hold plans to the quota the server holds users to.
	worker := load(t)["Deployment/scalein-worker"].Spec.Template.Spec.Containers[0]
	assert.Equal(t, arg(serve.Args, "-quota-queued-runs"), arg(worker.Args, "-quota-queued-runs"), "-quota-queued-runs as in this server")
}
