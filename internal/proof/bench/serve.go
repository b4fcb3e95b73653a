package main

import (
	"bufio"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// serverSpec is how to start one nats-server in a child process: the same
// binary run as "bench serve ...". A server of its own keeps its CPU, memory
// and goroutines apart from the nodes' (figure 5), and can be killed with
// SIGKILL like a real crash (figure 8).
type serverSpec struct {
	name        string
	port        int
	httpPort    int
	clusterPort int      // 0: standalone
	routes      []string // nats-route://127.0.0.1:PORT of every member
	store       string
	nofile      uint64 // the process's descriptor limit (RLIMIT_NOFILE); 0: inherited
	statsPort   int    // 0: no runtime statistics endpoint (serverstats.go's serveRuntimeStats)
	logFile     string // the server's log (notices and warnings); "": none
}

// serveCommand is the first argument that makes the program a server.
const serveCommand = "serve"

func (s serverSpec) args() []string {
	a := []string{serveCommand,
		"-name", s.name,
		"-port", fmt.Sprint(s.port),
		"-http", fmt.Sprint(s.httpPort),
		"-store", s.store,
	}
	if s.nofile > 0 {
		a = append(a, "-nofile", fmt.Sprint(s.nofile))
	}
	if s.statsPort > 0 {
		a = append(a, "-stats-port", fmt.Sprint(s.statsPort))
	}
	if s.logFile != "" {
		a = append(a, "-log", s.logFile)
	}
	if s.clusterPort > 0 {
		a = append(a, "-cluster-port", fmt.Sprint(s.clusterPort), "-routes", strings.Join(s.routes, ","))
	}
	return a
}

// serve runs the child side: it starts the server, prints "ready" on
// stdout, and shuts down gracefully on SIGTERM or when stdin closes (the
// parent went away). SIGKILL is left to the kernel: a crash.
func serve(args []string) error {
	fs := flag.NewFlagSet(serveCommand, flag.ContinueOnError)
	var s serverSpec
	var routes string
	fs.StringVar(&s.name, "name", "bench", "server name")
	fs.IntVar(&s.port, "port", server.RANDOM_PORT, "client port")
	fs.IntVar(&s.httpPort, "http", 0, "monitoring port")
	fs.IntVar(&s.clusterPort, "cluster-port", 0, "route port (cluster member)")
	fs.StringVar(&routes, "routes", "", "comma-separated route URLs of all members")
	fs.StringVar(&s.store, "store", "", "JetStream store directory")
	fs.Uint64Var(&s.nofile, "nofile", 0, "descriptor limit to set (soft and hard; 0: inherited)")
	fs.IntVar(&s.statsPort, "stats-port", 0, "port of the runtime statistics endpoint (0: none)")
	fs.StringVar(&s.logFile, "log", "", "file for the server's log (default: no log)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if s.nofile > 0 {
		// Raising the hard limit needs CAP_SYS_RESOURCE (root here).
		lim := syscall.Rlimit{Cur: s.nofile, Max: s.nofile}
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			return fmt.Errorf("descriptor limit %d: %w", s.nofile, err)
		}
	}
	if s.statsPort > 0 {
		stop, err := serveRuntimeStats(s.statsPort)
		if err != nil {
			return err
		}
		defer stop()
	}
	o := &server.Options{
		ServerName: s.name,
		Host:       "127.0.0.1",
		Port:       s.port,
		HTTPHost:   "127.0.0.1",
		HTTPPort:   s.httpPort,
		JetStream:  true,
		StoreDir:   s.store,
		NoLog:      s.logFile == "",
		LogFile:    s.logFile,
		Logtime:    true,
		NoSigs:     true,
	}
	if s.clusterPort > 0 {
		o.Cluster.Name = "bench"
		o.Cluster.Host = "127.0.0.1"
		o.Cluster.Port = s.clusterPort
		o.Cluster.NoAdvertise = true
		for _, r := range strings.Split(routes, ",") {
			u, err := url.Parse(r)
			if err != nil {
				return fmt.Errorf("route %q: %w", r, err)
			}
			o.Routes = append(o.Routes, u)
		}
	}
	ns, err := server.NewServer(o)
	if err != nil {
		return err
	}
	if s.logFile != "" {
		ns.ConfigureLogger()
	}
	go ns.Start()
	if !ns.ReadyForConnections(30 * time.Second) {
		ns.Shutdown()
		return fmt.Errorf("server %s not ready after 30s", s.name)
	}
	fmt.Println("ready")

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	eof := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
		}
		close(eof)
	}()
	select {
	case <-sigs:
	case <-eof:
	}
	ns.Shutdown()
	ns.WaitForShutdown()
	return nil
}
