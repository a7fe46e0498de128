package config_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/config"
)

func TestMaskedHidesTheDSNPassword(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, dsn, want string
	}{
		{"url password", "postgres://user:s3cret@host:5432/db?sslmode=disable",
			"postgres://user:xxxxx@host:5432/db?sslmode=disable"},
		{"url percent-encoded password", "postgres://user:p%40ss@host/db",
			"postgres://user:xxxxx@host/db"},
		{"url without password is unchanged", "postgres://user@host/db?sslmode=disable",
			"postgres://user@host/db?sslmode=disable"},
		{"url password in query keeps param order", "postgres://host/db?user=u&password=s3cret&sslmode=require",
			"postgres://host/db?user=u&password=xxxxx&sslmode=require"},
		{"url sslpassword in query", "postgres://host/db?sslpassword=s3cret",
			"postgres://host/db?sslpassword=xxxxx"},
		{"unparsable url is hidden whole", "postgres://user:s3c/ret@host/db", "xxxxx"},
		{"key=value", "host=db user=u password=s3cret dbname=azolla",
			"host=db user=u password=xxxxx dbname=azolla"},
		{"key=value quoted with spaces", `host=db password = 'my s\'ecret' dbname=azolla`,
			"host=db password = xxxxx dbname=azolla"},
		{"key=value sslpassword", "host=db sslpassword=s3cret",
			"host=db sslpassword=xxxxx"},
		{"key=value without password is unchanged", "host=db user=u", "host=db user=u"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := config.Config{Store: config.StoreConfig{Driver: "postgres", DSN: tt.dsn}}
			m := c.Masked()
			require.Equal(t, tt.want, m.Store.DSN)
			require.Equal(t, tt.dsn, c.Store.DSN, "the original is untouched")
		})
	}
}

func TestMaskedKeepsEverythingElse(t *testing.T) {
	t.Parallel()
	c := valid()
	require.Equal(t, c, c.Masked())
}
