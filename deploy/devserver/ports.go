package devserver

import (
	"errors"
	"fmt"
	"net"
	"strconv"
)

// ErrPortInUse is returned by Start when a port it must listen on is taken.
var ErrPortInUse = errors.New("port already in use")

// checkPortFree fails with ErrPortInUse, naming the port, when host:port
// cannot be listened on. It is checked up front because the UI server exits
// the process (log.Fatal) on a bind error and the Temporal server leaves
// already started services running when a later one fails to bind.
func checkPortFree(what, host string, port int) error {
	l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return fmt.Errorf("%s port %d on %s: %w (%w)", what, port, host, ErrPortInUse, err)
	}
	return l.Close()
}

// freePorts asks the kernel for n distinct unused ports on host. They are
// released before the server binds them, so another process could take one
// in between; that race is accepted for the server's internal services,
// whose ports nobody sets or sees.
func freePorts(host string, n int) ([]int, error) {
	ports := make([]int, n)
	for i := range ports {
		// Held open until all are picked, so no port is handed out twice.
		l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			return nil, fmt.Errorf("pick a free port on %s: %w", host, err)
		}
		defer l.Close()
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports, nil
}
