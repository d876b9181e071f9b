// kstatus-json: computes kstatus (sigs.k8s.io/cli-utils/pkg/kstatus/status.Compute) for each object of a
// JSON array read from stdin and writes a JSON array of {status, message, conditions} to stdout, in order.
// A test tool for devctl: the published rules that Flux, Helm 4 --wait, kpt and cli-utils appliers use.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sjson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

type result struct {
	Status     string             `json:"status"`
	Message    string             `json:"message"`
	Conditions []status.Condition `json:"conditions"`
	Error      string             `json:"error,omitempty"`
}

func main() {
	in, err := io.ReadAll(os.Stdin)
	if err != nil {
		fail(err)
	}
	var objects []map[string]interface{}
	// apimachinery's decoder gives whole numbers as int64, as unstructured objects from a client hold them.
	if err := k8sjson.Unmarshal(in, &objects); err != nil {
		fail(fmt.Errorf("stdin must be a JSON array of Kubernetes objects: %w", err))
	}
	out := make([]result, 0, len(objects))
	for _, o := range objects {
		r, err := status.Compute(&unstructured.Unstructured{Object: o})
		if err != nil {
			out = append(out, result{Status: "Error", Error: err.Error()})
			continue
		}
		out = append(out, result{Status: r.Status.String(), Message: r.Message, Conditions: r.Conditions})
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "kstatus-json:", err)
	os.Exit(1)
}
