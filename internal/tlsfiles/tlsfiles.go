// Package tlsfiles reads the PEM files azolla's TLS settings name: the CA
// bundles that verify a Temporal frontend, a control plane or the remote
// workers' client certificates.
package tlsfiles

import (
	"crypto/x509"
	"fmt"
	"os"
)

// CAPool reads the PEM bundle at path into a pool; a file without any
// certificate is an error, not an empty pool that trusts nothing.
func CAPool(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s holds no PEM certificate", path)
	}
	return pool, nil
}
