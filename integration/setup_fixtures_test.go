package integration

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Local stand-ins for the internet a setup would download from: a file://
// Go module proxy, an npm registry on loopback, a directory of wheels.
// Each serves one small library, greet, whose Hello says hello.

// writeFiles writes files (path to content) under dir.
func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
}

// goModule is example.com/greet v1.0.0.
var goModule = map[string]string{
	"go.mod":   "module example.com/greet\n\ngo 1.22\n",
	"greet.go": "package greet\n\n// Hello greets name.\nfunc Hello(name string) string { return \"hello, \" + name }\n",
}

// goProxy writes a file:// module proxy holding goModule and returns its
// URL and the go.sum lines of a module that requires it.
func goProxy(t testing.TB) (proxy, sum string) {
	t.Helper()
	const mod, version = "example.com/greet", "v1.0.0"
	dir := filepath.Join(t.TempDir(), "goproxy")
	at := filepath.Join(dir, mod, "@v")
	require.NoError(t, os.MkdirAll(at, 0o755))
	var zipped bytes.Buffer
	zw := zip.NewWriter(&zipped)
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range goModule {
			if !yield(n) {
				return
			}
		}
	})
	var tree strings.Builder
	for _, n := range names {
		w, err := zw.Create(mod + "@" + version + "/" + n)
		require.NoError(t, err)
		_, err = w.Write([]byte(goModule[n]))
		require.NoError(t, err)
		fmt.Fprintf(&tree, "%x  %s\n", sha256.Sum256([]byte(goModule[n])), mod+"@"+version+"/"+n)
	}
	require.NoError(t, zw.Close())
	writeFiles(t, at, map[string]string{
		"list":            version + "\n",
		version + ".info": `{"Version":"` + version + `","Time":"2026-01-01T00:00:00Z"}`,
		version + ".mod":  goModule["go.mod"],
		version + ".zip":  zipped.String(),
	})
	h1 := func(s string) string {
		sum := sha256.Sum256([]byte(s))
		return "h1:" + base64.StdEncoding.EncodeToString(sum[:])
	}
	modTree := fmt.Sprintf("%x  go.mod\n", sha256.Sum256([]byte(goModule["go.mod"])))
	sum = fmt.Sprintf("%s %s %s\n%s %s/go.mod %s\n", mod, version, h1(tree.String()), mod, version, h1(modTree))
	return "file://" + dir, sum
}

// goRepository is a module that uses greet, whose test fails until
// greeting.go says "hello, world".
func goRepository(t testing.TB, sum string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "goapp")
	writeFiles(t, dir, map[string]string{
		"go.mod":           "module example.com/app\n\ngo 1.22\n\nrequire example.com/greet v1.0.0\n",
		"go.sum":           sum,
		"greeting.go":      "package app\n\nimport \"example.com/greet\"\n\n// Greeting is what the app says.\nfunc Greeting() string { return greet.Hello(\"wrld\") }\n",
		"greeting_test.go": "package app\n\nimport \"testing\"\n\nfunc TestGreeting(t *testing.T) {\n\tif got := Greeting(); got != \"hello, world\" {\n\t\tt.Fatalf(\"Greeting() = %q\", got)\n\t}\n}\n",
	})
	return commitAll(t, dir)
}

// commitAll makes dir a repository with everything in it committed on
// main.
func commitAll(t testing.TB, dir string) string {
	t.Helper()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "initial"}} {
		cmd := exec.Command("git", append([]string{"-c", "user.name=Upstream", "-c", "user.email=up@example.com"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	return dir
}

// npmRegistry serves greet 1.0.0's tarball on loopback and returns the
// tarball's URL and its integrity.
func npmRegistry(t testing.TB) (tarball, integrity string) {
	t.Helper()
	var tgz bytes.Buffer
	gz := gzip.NewWriter(&tgz)
	tw := tar.NewWriter(gz)
	for name, content := range map[string]string{
		"package/package.json": `{"name":"greet","version":"1.0.0","main":"index.js"}`,
		"package/index.js":     "exports.hello = (name) => 'hello, ' + name;\n",
	} {
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(content))}))
		_, err := tw.Write([]byte(content))
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	require.NoError(t, gz.Close())
	body := tgz.Bytes()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/greet/-/greet-1.0.0.tgz" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	sum := sha512.Sum512(body)
	return srv.URL + "/greet/-/greet-1.0.0.tgz", "sha512-" + base64.StdEncoding.EncodeToString(sum[:])
}

// nodeRepository is a package using greet, whose test fails until
// greeting.js says "hello, world".
func nodeRepository(t testing.TB, tarball, integrity string) string {
	t.Helper()
	lock, err := json.MarshalIndent(map[string]any{
		"name": "app", "version": "1.0.0", "lockfileVersion": 3, "requires": true,
		"packages": map[string]any{
			"":                   map[string]any{"name": "app", "version": "1.0.0", "dependencies": map[string]string{"greet": "^1.0.0"}},
			"node_modules/greet": map[string]any{"version": "1.0.0", "resolved": tarball, "integrity": integrity},
		},
	}, "", "  ")
	require.NoError(t, err)
	dir := filepath.Join(t.TempDir(), "nodeapp")
	writeFiles(t, dir, map[string]string{
		"package.json":      `{"name":"app","version":"1.0.0","dependencies":{"greet":"^1.0.0"}}`,
		"package-lock.json": string(lock),
		".gitignore":        "node_modules/\n",
		"greeting.js":       "const greet = require('greet');\nexports.greeting = () => greet.hello('wrld');\n",
		"test.js": "const assert = require('assert');\nassert.strictEqual(require('./greeting').greeting(), 'hello, world');\n" +
			"console.log('ok');\n",
	})
	return commitAll(t, dir)
}

// wheels writes a directory holding greet's wheel.
func wheels(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "wheels")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	files := map[string]string{
		"greet/__init__.py":              "def hello(name):\n    return 'hello, ' + name\n",
		"greet-1.0.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: greet\nVersion: 1.0.0\n",
		"greet-1.0.0.dist-info/WHEEL":    "Wheel-Version: 1.0\nGenerator: azolla-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
	}
	var record strings.Builder
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range files {
			if !yield(n) {
				return
			}
		}
	}) {
		w, err := zw.Create(name)
		require.NoError(t, err)
		_, err = w.Write([]byte(files[name]))
		require.NoError(t, err)
		sum := sha256.Sum256([]byte(files[name]))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", name, base64.RawURLEncoding.EncodeToString(sum[:]), len(files[name]))
	}
	record.WriteString("greet-1.0.0.dist-info/RECORD,,\n")
	w, err := zw.Create("greet-1.0.0.dist-info/RECORD")
	require.NoError(t, err)
	_, err = w.Write([]byte(record.String()))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	require.NoError(t, os.WriteFile(filepath.Join(dir, "greet-1.0.0-py3-none-any.whl"), buf.Bytes(), 0o644))
	return dir
}

// pythonRepository uses greet, whose test fails until greeting.py says
// "hello, world".
func pythonRepository(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "pyapp")
	writeFiles(t, dir, map[string]string{
		"requirements.txt": "greet==1.0.0\n",
		"greeting.py":      "import greet\n\n\ndef greeting():\n    return greet.hello('wrld')\n",
		"test_greeting.py": "import unittest\n\nimport greeting\n\n\nclass Test(unittest.TestCase):\n    def test_greeting(self):\n" +
			"        self.assertEqual(greeting.greeting(), 'hello, world')\n",
	})
	return commitAll(t, dir)
}

// fixWrld is the stand-in agent: it fixes the greeting, whatever the
// language.
const fixWrld = `sed -i 's/wrld/world/' greeting.*`
