// The seed's operator (runOperator) as one program, for `npm run bench` (tests/bench/_peer.ts).
//
// Everything the seed's runOperator sets is kept (zap logger, a manager on GetConfigOrDie with
// leader election and ID webapp-operator-lock, the scheme, the reconciler, SetupWithManager). Flags
// the benchmark needs, all with the seed's behaviour as default except the addresses:
//
//	--leader-elect (true), --leader-election-namespace (the one watched, else "default"),
//	--namespace (all namespaces when empty), --concurrency (1, controller-runtime's default),
//	--metrics-bind-address, --health-probe-bind-address, and controller-runtime's own --kubeconfig
//	and --zap-* flags.
//
// /readyz answers 200 once the WebApp, Deployment and Service informers have synced (devctl's
// /readyz means the same), /healthz always; /metrics is controller-runtime's registry, including
// client-go's rest_client_requests_total{code,method,host}.
package main

import (
	"errors"
	"flag"
	"net/http"
	"os"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

type flags struct {
	leaderElect   bool
	leaderElectNs string
	namespaces    string
	concurrency   int
	resyncPeriod  time.Duration
	metricsAddr   string
	probeAddr     string
	zapOptions    zap.Options
}

func main() {
	var f flags
	flag.BoolVar(&f.leaderElect, "leader-elect", true, "use leader election (the seed's default)")
	flag.StringVar(&f.leaderElectNs, "leader-election-namespace", "", "namespace of the Lease (default: --namespace, else default)")
	flag.StringVar(&f.namespaces, "namespaces", "", "watch only these namespaces, comma-separated (default: all)")
	flag.IntVar(&f.concurrency, "concurrency", 1, "MaxConcurrentReconciles")
	flag.DurationVar(&f.resyncPeriod, "resync-period", 0, "the cache's SyncPeriod (0: controller-runtime's default)")
	flag.StringVar(&f.metricsAddr, "metrics-bind-address", "127.0.0.1:8080", "address of /metrics")
	flag.StringVar(&f.probeAddr, "health-probe-bind-address", "127.0.0.1:8081", "address of /healthz and /readyz")
	f.zapOptions.BindFlags(flag.CommandLine)
	flag.Parse()
	if err := runOperator(f); err != nil {
		os.Exit(1)
	}
}

func runOperator(f flags) error {
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&f.zapOptions)))
	logger := ctrl.Log.WithName("setup")

	opts := ctrl.Options{
		LeaderElection:          f.leaderElect,
		LeaderElectionID:        "webapp-operator-lock",
		LeaderElectionNamespace: leaseNamespace(f),
		Metrics:                 metricsserver.Options{BindAddress: f.metricsAddr},
		HealthProbeBindAddress:  f.probeAddr,
	}
	if f.namespaces != "" {
		opts.Cache.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range strings.Split(f.namespaces, ",") {
			opts.Cache.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	if f.resyncPeriod > 0 {
		opts.Cache.SyncPeriod = &f.resyncPeriod
	}
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), opts)
	if err != nil {
		logger.Error(err, "unable to create manager")
		return err
	}

	webappv1AddToScheme := SchemeBuilder.AddToScheme
	if err := webappv1AddToScheme(mgr.GetScheme()); err != nil {
		logger.Error(err, "unable to register the WebApp types")
		return err
	}

	if err := (&WebAppReconciler{
		Client:                  mgr.GetClient(),
		Recorder:                mgr.GetEventRecorderFor("webapp-operator"),
		MaxConcurrentReconciles: f.concurrency,
	}).SetupWithManager(mgr); err != nil {
		logger.Error(err, "unable to create controller")
		return err
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("informers", informersSynced(mgr.GetCache())); err != nil {
		return err
	}

	logger.Info("starting manager")
	return mgr.Start(ctrl.SetupSignalHandler())
}

func leaseNamespace(f flags) string {
	switch {
	case f.leaderElectNs != "":
		return f.leaderElectNs
	case f.namespaces != "":
		return strings.Split(f.namespaces, ",")[0]
	default:
		return "default"
	}
}

// informersSynced passes once the informers of the three watched kinds exist and have synced.
func informersSynced(c cache.Cache) healthz.Checker {
	kinds := []client.Object{&WebApp{}, &appsv1.Deployment{}, &corev1.Service{}}
	return func(req *http.Request) error {
		for _, obj := range kinds {
			inf, err := c.GetInformer(req.Context(), obj, cache.BlockUntilSynced(false))
			if err != nil {
				return err
			}
			if !inf.HasSynced() {
				return errors.New("informers not synced yet")
			}
		}
		return nil
	}
}
