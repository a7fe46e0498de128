package egress

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
)

// RelayAddress is where, inside a sandbox, the relay listens: the
// sandbox's own loopback, which nothing else there uses.
const RelayAddress = "127.0.0.1:3128"

// RelayCommand is the subcommand of azolla's binary that runs Relay, the
// first process of a sandbox whose network is an allowlist.
const RelayCommand = "egress-relay"

// Relay listens on listen, forwards every connection to the Unix socket
// at socket (the proxy, outside the sandbox), and runs argv meanwhile: the
// run's command, started only once the relay listens. It returns argv's
// exit status; a signal that killed argv kills the relay too, so the
// sandbox's caller sees how the command ended.
func Relay(listen, socket string, argv []string) int {
	if len(argv) == 0 {
		fmt.Fprintln(os.Stderr, "egress relay: no command to run")
		return 2
	}
	l, err := net.Listen("tcp", listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "egress relay:", err)
		return 2
	}
	go serveRelay(l, socket)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "egress relay:", err)
		return 127
	}
	go func() {
		for s := range sigs {
			_ = cmd.Process.Signal(s)
		}
	}()
	err = cmd.Wait()
	signal.Stop(sigs)
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			signal.Reset(ws.Signal())
			_ = syscall.Kill(os.Getpid(), ws.Signal())
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "egress relay:", err)
		return 127
	}
	return 0
}

// RelayMain runs Relay from the relay's command line: the address to
// listen on, the proxy's socket, "--", and the command.
func RelayMain(args []string) int {
	if len(args) < 4 || args[2] != "--" {
		fmt.Fprintln(os.Stderr, "usage: azolla "+RelayCommand+" ADDRESS SOCKET -- COMMAND...")
		return 2
	}
	return Relay(args[0], args[1], args[3:])
}

// serveRelay forwards each connection on l to the socket.
func serveRelay(l net.Listener, socket string) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			up, err := net.Dial("unix", socket)
			if err != nil {
				return
			}
			defer up.Close()
			var wg sync.WaitGroup
			wg.Go(func() {
				_, _ = io.Copy(up, c)
				closeWrite(up)
			})
			_, _ = io.Copy(c, up)
			closeWrite(c)
			wg.Wait()
		}()
	}
}
