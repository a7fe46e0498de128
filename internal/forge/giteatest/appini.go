package giteatest

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"os"
	"strings"
	"text/template"
)

// iniConfig is what the app.ini of one server is made of.
type iniConfig struct {
	WorkDir    string
	StaticRoot string
	Port       int
	DBHost     string
	DBName     string
	DBUser     string
	DBPassword string
	// Secrets Gitea would otherwise generate and write back into app.ini.
	InternalToken, JWTSecret, LFSJWTSecret string
}

// appINI is the smallest Gitea that serves azolla's API calls: no SSH, no
// mail, no indexer, no Actions or packages, in-process queues and caches,
// and none of the cron jobs that run at start. Passwords are hashed
// cheaply: they guard nothing but a throwaway server.
var appINI = template.Must(template.New("app.ini").Parse(`APP_NAME = azolla test forge
RUN_MODE = prod
WORK_PATH = {{.WorkDir}}
I_AM_BEING_UNSAFE_RUNNING_AS_ROOT = true

[server]
PROTOCOL = http
HTTP_ADDR = 127.0.0.1
HTTP_PORT = {{.Port}}
ROOT_URL = http://127.0.0.1:{{.Port}}/
LOCAL_ROOT_URL = http://127.0.0.1:{{.Port}}/
STATIC_ROOT_PATH = {{.StaticRoot}}
APP_DATA_PATH = {{.WorkDir}}/data
DISABLE_SSH = true
START_SSH_SERVER = false
OFFLINE_MODE = true
LFS_START_SERVER = false
LFS_JWT_SECRET = {{.LFSJWTSecret}}

[database]
DB_TYPE = postgres
HOST = {{.DBHost}}
NAME = {{.DBName}}
USER = {{.DBUser}}
PASSWD = ` + "`{{.DBPassword}}`" + `
SSL_MODE = disable
LOG_SQL = false

[repository]
ROOT = {{.WorkDir}}/repositories
DEFAULT_BRANCH = main

[webhook]
; Deliveries go to the tests' own servers on this host.
ALLOWED_HOST_LIST = loopback
DELIVER_TIMEOUT = 5

[security]
INSTALL_LOCK = true
INTERNAL_TOKEN = {{.InternalToken}}
PASSWORD_HASH_ALGO = pbkdf2$1000$50

[oauth2]
ENABLED = false
JWT_SECRET = {{.JWTSecret}}

[service]
DISABLE_REGISTRATION = true
ENABLE_NOTIFY_MAIL = false
DEFAULT_KEEP_EMAIL_PRIVATE = true

[mailer]
ENABLED = false

[indexer]
ISSUE_INDEXER_TYPE = db
REPO_INDEXER_ENABLED = false

[queue]
TYPE = channel

[cache]
ADAPTER = memory

[session]
PROVIDER = memory

[picture]
DISABLE_GRAVATAR = true
ENABLE_FEDERATED_AVATAR = false

[actions]
ENABLED = false

[packages]
ENABLED = false

[log]
MODE = console
LEVEL = Warn
ROOT_PATH = {{.WorkDir}}/log

[cron.update_checker]
ENABLED = false

[cron.check_repo_stats]
ENABLED = false
RUN_AT_START = false

[cron.archive_cleanup]
ENABLED = false
RUN_AT_START = false

[cron.deleted_branches_cleanup]
ENABLED = false
RUN_AT_START = false

[cron.update_migration_poster_id]
ENABLED = false
RUN_AT_START = false
`))

// newINIConfig is the configuration of a server in workDir on database pg,
// with fresh secrets; its port is chosen later.
func newINIConfig(workDir, staticRoot string, pg *postgres) iniConfig {
	return iniConfig{WorkDir: workDir, StaticRoot: staticRoot,
		DBHost: pg.host, DBName: pg.name, DBUser: pg.user, DBPassword: pg.password,
		InternalToken: hex.EncodeToString(randomBytes(32)),
		JWTSecret:     base64.RawURLEncoding.EncodeToString(randomBytes(32)),
		LFSJWTSecret:  base64.RawURLEncoding.EncodeToString(randomBytes(32))}
}

// writeAppINI writes cfg to path.
func writeAppINI(path string, cfg iniConfig) error {
	var b strings.Builder
	if err := appINI.Execute(&b, cfg); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(b.String()), 0o600)
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

func randomHex(n int) string { return hex.EncodeToString(randomBytes(n)) }
