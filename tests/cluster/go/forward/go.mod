// The host-loopback forwarder of the test cluster (standard library only).
module devctl.local/testcluster/forward

go 1.26.0
