// apicheck runs the Kubernetes API server's own code (k8s.io/kubernetes and k8s.io/apiextensions-apiserver, the
// versions the test cluster is built from) on devctl's objects, without a cluster. tests/apicheck.ts builds it
// and records what it says into the unit tests' fixtures.
//
//	apicheck crd CRD.yaml             the CRD's own validation (structural schema, CEL compilation and cost)
//	apicheck webapps CRD.yaml < objs  each WebApp pruned, defaulted and validated by the CRD (schema and CEL)
//	apicheck deployments < objs       each Deployment decoded, defaulted, validated and encoded as the server does,
//	                                  and its pod template judged by Pod Security admission's "restricted" level
//	apicheck quantities < texts       each quantity parsed and written again as the server does ("" if refused)
//
// Input is a JSON array on stdin; results are a JSON array on stdout, one entry per input.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	appsv1 "k8s.io/api/apps/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsinstall "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/kubernetes/pkg/apis/apps"
	_ "k8s.io/kubernetes/pkg/apis/apps/install"
	appsvalidation "k8s.io/kubernetes/pkg/apis/apps/validation"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	corevalidation "k8s.io/kubernetes/pkg/apis/core/validation"
	psaapi "k8s.io/pod-security-admission/api"
	psapolicy "k8s.io/pod-security-admission/policy"
	"sigs.k8s.io/yaml"
)

func main() {
	if len(os.Args) < 2 {
		fail("usage: apicheck crd|webapps|deployments [CRD.yaml]")
	}
	var out any
	switch os.Args[1] {
	case "crd":
		crd := readCRD(os.Args[2])
		out = messages(crdvalidation.ValidateCustomResourceDefinition(context.Background(), crd))
	case "webapps":
		out = webapps(readCRD(os.Args[2]), readObjects())
	case "deployments":
		out = deployments(readObjects())
	case "quantities":
		out = quantities()
	default:
		fail("unknown command " + os.Args[1])
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		fail(err.Error())
	}
}

func readCRD(path string) *apiextensions.CustomResourceDefinition {
	data, err := os.ReadFile(path)
	check(err)
	scheme := runtime.NewScheme()
	apiextensionsinstall.Install(scheme)
	v1 := &apiextensionsv1.CustomResourceDefinition{}
	check(yaml.UnmarshalStrict(data, v1))
	scheme.Default(v1)
	internal := &apiextensions.CustomResourceDefinition{}
	check(scheme.Convert(v1, internal, nil))
	return internal
}

func readObjects() []map[string]any {
	data, err := io.ReadAll(os.Stdin)
	check(err)
	// As the API server reads a custom resource: whole numbers as int64, not float64 (CEL compares them as int).
	var objs []map[string]any
	check(utiljson.Unmarshal(data, &objs))
	return objs
}

type webappResult struct {
	Errors []string       `json:"errors"`
	Stored map[string]any `json:"stored,omitempty"`
}

// As the customresource strategy does on create: prune, default, then validate by the schema and by CEL.
func webapps(crd *apiextensions.CustomResourceDefinition, objs []map[string]any) []webappResult {
	props := crd.Spec.Validation
	if props == nil {
		props = crd.Spec.Versions[0].Schema
	}
	structural, err := structuralschema.NewStructural(props.OpenAPIV3Schema)
	check(err)
	validator, _, err := apiservervalidation.NewSchemaValidator(props.OpenAPIV3Schema)
	check(err)
	celValidator := cel.NewValidator(structural, true, celconfig.PerCallLimit)
	results := make([]webappResult, 0, len(objs))
	for _, obj := range objs {
		pruning.Prune(obj, structural, true)
		structuraldefaulting.Default(obj, structural)
		errs := apiservervalidation.ValidateCustomResource(nil, obj, validator)
		celErrs, _ := celValidator.Validate(context.Background(), nil, structural, obj, nil, celconfig.RuntimeCELCostBudget)
		errs = append(errs, celErrs...)
		results = append(results, webappResult{Errors: messages(errs), Stored: obj})
	}
	return results
}

type deploymentResult struct {
	Errors []string           `json:"errors"`
	Stored *appsv1.Deployment `json:"stored,omitempty"`
	// What Pod Security admission at level "restricted" (latest version) forbids in the pod template; none: allowed.
	Restricted []string `json:"restricted"`
}

// As the API server does with a Deployment written to it: decode, default, convert to the internal version,
// validate, and encode the stored object as apps/v1 again.
func deployments(objs []map[string]any) []deploymentResult {
	codec := legacyscheme.Codecs.UniversalDeserializer()
	evaluator, err := psapolicy.NewEvaluator(psapolicy.DefaultChecks(), nil)
	check(err)
	restricted := psaapi.LevelVersion{Level: psaapi.LevelRestricted, Version: psaapi.LatestVersion()}
	results := make([]deploymentResult, 0, len(objs))
	for _, raw := range objs {
		data, err := json.Marshal(raw)
		check(err)
		decoded, _, err := codec.Decode(data, nil, &appsv1.Deployment{})
		if err != nil {
			results = append(results, deploymentResult{Errors: []string{err.Error()}})
			continue
		}
		obj := decoded.(*appsv1.Deployment)
		legacyscheme.Scheme.Default(obj)
		internal := &apps.Deployment{}
		check(legacyscheme.Scheme.Convert(obj, internal, nil))
		errs := appsvalidation.ValidateDeployment(internal, corevalidation.PodValidationOptions{})
		stored := &appsv1.Deployment{}
		check(legacyscheme.Scheme.Convert(internal, stored, nil))
		// The stored object goes through its wire form once more, as etcd and every read give it.
		wire, err := json.Marshal(stored)
		check(err)
		again := &appsv1.Deployment{}
		check(json.Unmarshal(wire, again))
		verdict := psapolicy.AggregateCheckResults(
			evaluator.EvaluatePod(restricted, &again.Spec.Template.ObjectMeta, &again.Spec.Template.Spec))
		forbidden := []string{}
		for i, reason := range verdict.ForbiddenReasons {
			forbidden = append(forbidden, reason+": "+verdict.ForbiddenDetails[i])
		}
		results = append(results, deploymentResult{Errors: messages(errs), Stored: again, Restricted: forbidden})
	}
	return results
}

func messages(errs field.ErrorList) []string {
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

func check(err error) {
	if err != nil {
		fail(err.Error())
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, msg)
	os.Exit(1)
}

// Each quantity text parsed as the API server parses it, and written as it writes it; "" when it does not parse.
func quantities() []string {
	data, err := io.ReadAll(os.Stdin)
	check(err)
	var in []string
	check(json.Unmarshal(data, &in))
	out := make([]string, 0, len(in))
	for _, s := range in {
		q, err := resource.ParseQuantity(s)
		if err != nil {
			out = append(out, "")
			continue
		}
		// Through JSON, as a stored object is written.
		wire, err := json.Marshal(q)
		check(err)
		var text string
		check(json.Unmarshal(wire, &text))
		out = append(out, text)
	}
	return out
}
