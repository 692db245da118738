package status

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/interpreter"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/lru"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/yaml"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// HealthExpression judges the objects of one kind: the first of
// InProgress, Failed and Current that is true gives the state; when none
// is, the object is InProgress. Each reads the object's metadata and
// status, and nothing else: the adapter keeps no more of a custom
// resource, whichever way it was read (an expression that names spec does
// not compile, and judges the object Unknown, naming the expression). An
// evaluation costs at most ExpressionCostLimit, as Kubernetes bounds its
// own CEL.
type HealthExpression struct {
	// APIVersion is the kind's group/version; the version is not matched:
	// the object is read at the version the API server prefers.
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Current    string `json:"current"`
	InProgress string `json:"inProgress,omitempty"`
	Failed     string `json:"failed,omitempty"`
}

// DefaultHealthExpressions are the kinds the adapter judges without being
// told, which bundles commonly install and which report nothing: the
// Prometheus operator's configuration objects, which only its own
// controller reads.
var DefaultHealthExpressions = []HealthExpression{
	{APIVersion: "monitoring.coreos.com/v1", Kind: "ServiceMonitor", Current: "true"},
	{APIVersion: "monitoring.coreos.com/v1", Kind: "PodMonitor", Current: "true"},
	{APIVersion: "monitoring.coreos.com/v1", Kind: "PrometheusRule", Current: "true"},
	{APIVersion: "monitoring.coreos.com/v1", Kind: "Probe", Current: "true"},
}

// HealthRules are the expressions that judge installed objects, by kind.
type HealthRules map[schema.GroupKind]HealthExpression

// HealthRulesOf are the default expressions with those annotations give
// (which win for a kind both name); err says why the annotation cannot be
// read, and the defaults are then the rules.
func HealthRulesOf(annotations map[string]string) (HealthRules, error) {
	rules := HealthRules{}
	for _, e := range DefaultHealthExpressions {
		rules[e.groupKind()] = e
	}
	v := strings.TrimSpace(annotations[rukpakv1alpha2.AnnotationHealthExpressions])
	if v == "" {
		return rules, nil
	}
	var given []HealthExpression
	if err := yaml.UnmarshalStrict([]byte(v), &given); err != nil {
		return rules, fmt.Errorf("the annotation %s is not a list of {apiVersion, kind, current, inProgress, failed}: %w", rukpakv1alpha2.AnnotationHealthExpressions, err)
	}
	for _, e := range given {
		if e.Kind == "" || e.Current == "" {
			return rules, fmt.Errorf("the annotation %s has an entry without kind or current: each needs both", rukpakv1alpha2.AnnotationHealthExpressions)
		}
		rules[e.groupKind()] = e
	}
	return rules, nil
}

// Unjudged says whether the objects of gk need not be read: its
// expression says Current of every one.
func (r HealthRules) Unjudged(gk schema.GroupKind) bool {
	e, ok := r[gk]
	return ok && strings.TrimSpace(e.Current) == "true" && e.InProgress == "" && e.Failed == ""
}

func (e HealthExpression) groupKind() schema.GroupKind {
	return schema.FromAPIVersionAndKind(e.APIVersion, e.Kind).GroupKind()
}

// ExpressionCostLimit bounds the cost of one evaluation of a health
// expression, in CEL's cost units: Kubernetes' own bound on one
// expression of a CRD's validation rules (PerCallLimit). The expressions
// are users' input (an annotation, a Package value): one that runs past it
// is stopped and judges the object Unknown, naming it.
const ExpressionCostLimit = 1000000

// expressionTimeLimit bounds one evaluation's time as well, as
// Kubernetes' CEL admission does with its context: the cost limit is
// counted in CEL's units, and a busy machine makes those slow. CEL looks
// at the clock every 100 comprehension steps.
var expressionTimeLimit = time.Second

// celEnv is the environment every expression compiles in: the object's
// metadata and status as variables.
var celEnv = func() *cel.Env {
	env, err := cel.NewEnv(cel.Variable("metadata", cel.DynType), cel.Variable("status", cel.DynType))
	if err != nil {
		panic(err)
	}
	return env
}()

// judge computes u's state from e.
func (e HealthExpression) judge(u *unstructured.Unstructured) (kstatus.Status, string) {
	vars := map[string]any{"metadata": u.Object["metadata"], "status": map[string]any{}}
	if v, ok := u.Object["status"]; ok {
		vars["status"] = v
	}
	for _, c := range []struct {
		state kstatus.Status
		expr  string
	}{{kstatus.InProgressStatus, e.InProgress}, {kstatus.FailedStatus, e.Failed}, {kstatus.CurrentStatus, e.Current}} {
		if c.expr == "" {
			continue
		}
		prg, err := programOf(c.expr)
		if err != nil {
			return kstatus.UnknownStatus, fmt.Sprintf("its health expression %q (%s) does not compile: %v", c.expr, rukpakv1alpha2.AnnotationHealthExpressions, err)
		}
		ok, err := evalBool(prg, vars)
		var notBool *notBoolError
		var stopped interpreter.EvalCancelledError
		switch {
		case errors.As(err, &notBool):
			return kstatus.UnknownStatus, fmt.Sprintf("its health expression %q (%s) %v", c.expr, rukpakv1alpha2.AnnotationHealthExpressions, err)
		case errors.As(err, &stopped) && stopped.Cause == interpreter.CostLimitExceeded:
			return kstatus.UnknownStatus, fmt.Sprintf("its health expression %q (%s) was stopped: it costs more than the limit of %d an expression may (%v); make it cheaper",
				c.expr, rukpakv1alpha2.AnnotationHealthExpressions, ExpressionCostLimit, err)
		case errors.Is(err, interpreter.InterruptError{}):
			return kstatus.UnknownStatus, fmt.Sprintf("its health expression %q (%s) was stopped: it ran longer than the %s an expression may; make it cheaper",
				c.expr, rukpakv1alpha2.AnnotationHealthExpressions, expressionTimeLimit)
		}
		if ok {
			return c.state, fmt.Sprintf("%s (%s)", c.expr, rukpakv1alpha2.AnnotationHealthExpressions)
		}
	}
	return kstatus.InProgressStatus, fmt.Sprintf("none of its health expressions is true yet (current: %s)", e.Current)
}

type notBoolError struct{ value any }

func (e *notBoolError) Error() string { return fmt.Sprintf("gives %v, not true or false", e.value) }

// programs are the expressions compiled lately, so that an expression is
// compiled once, not once per object and look; bounded, since the
// expressions come from users' annotations.
var programs = lru.New(1024)

// programOf is expr compiled.
func programOf(expr string) (cel.Program, error) {
	if prg, ok := programs.Get(expr); ok {
		return prg.(cel.Program), nil
	}
	ast, iss := celEnv.Compile(expr)
	if iss.Err() != nil {
		return nil, fmt.Errorf("%w (an expression reads metadata and status only)", iss.Err())
	}
	prg, err := celEnv.Program(ast, cel.CostLimit(ExpressionCostLimit), cel.InterruptCheckFrequency(100))
	if err != nil {
		return nil, err
	}
	programs.Add(expr, prg)
	return prg, nil
}

// evalBool evaluates prg within expressionTimeLimit; an expression that
// reads a field the object lacks is false.
func evalBool(prg cel.Program, vars map[string]any) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), expressionTimeLimit)
	defer cancel()
	out, _, err := prg.ContextEval(ctx, vars)
	if err != nil {
		return false, err
	}
	b, ok := out.Value().(bool)
	if !ok {
		return false, &notBoolError{out.Value()}
	}
	return b, nil
}
