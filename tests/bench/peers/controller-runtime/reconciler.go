// The seed's reconciler, line for line (Reconcile, desiredDeployment, desiredService,
// SetupWithManager). Two additions, both marked: the Available condition the seed's "Status, Events"
// section asks to set on every reconcile (derived from readyReplicas, so that it means what its
// message says), and MaxConcurrentReconciles so the benchmark runs both operators at one concurrency.
package main

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

type WebAppReconciler struct {
	client.Client
	Recorder record.EventRecorder
	// Benchmark addition: the same worker count as devctl's --concurrency.
	MaxConcurrentReconciles int
}

func (r *WebAppReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	logger := log.FromContext(ctx)

	// Fetch the WebApp CR
	var webapp WebApp
	if err := r.Get(ctx, req.NamespacedName, &webapp); err != nil {
		if errors.IsNotFound(err) {
			// CR was deleted; owned resources are garbage collected via OwnerReference
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}

	// Reconcile Deployment
	desired := r.desiredDeployment(&webapp)
	var existing appsv1.Deployment
	err := r.Get(ctx, types.NamespacedName{
		Name: desired.Name, Namespace: desired.Namespace,
	}, &existing)

	if errors.IsNotFound(err) {
		logger.Info("Creating Deployment", "name", desired.Name)
		if err := r.Create(ctx, desired); err != nil {
			return ctrl.Result{}, err
		}
	} else if err != nil {
		return ctrl.Result{}, err
	} else {
		if *existing.Spec.Replicas != webapp.Spec.Replicas ||
			existing.Spec.Template.Spec.Containers[0].Image != webapp.Spec.Image {
			existing.Spec.Replicas = &webapp.Spec.Replicas
			existing.Spec.Template.Spec.Containers[0].Image = webapp.Spec.Image
			logger.Info("Updating Deployment", "name", existing.Name)
			if err := r.Update(ctx, &existing); err != nil {
				return ctrl.Result{}, err
			}
		}
	}

	// Reconcile Service (same pattern)
	desiredSvc := r.desiredService(&webapp)
	var existingSvc corev1.Service
	svcErr := r.Get(ctx, types.NamespacedName{
		Name: desiredSvc.Name, Namespace: desiredSvc.Namespace,
	}, &existingSvc)

	if errors.IsNotFound(svcErr) {
		logger.Info("Creating Service", "name", desiredSvc.Name)
		if err := r.Create(ctx, desiredSvc); err != nil {
			return ctrl.Result{}, err
		}
	} else if svcErr != nil {
		return ctrl.Result{}, svcErr
	}

	// Update status
	webapp.Status.ReadyReplicas = existing.Status.ReadyReplicas
	// Addition from the seed's "Status, Events" section: the Available condition, on every reconcile.
	meta.SetStatusCondition(&webapp.Status.Conditions, availableCondition(&webapp))
	if err := r.Status().Update(ctx, &webapp); err != nil {
		logger.Error(err, "updating status")
	}

	return ctrl.Result{}, nil
}

// availableCondition is the seed's condition (Available, DeploymentReady, "All replicas are
// available") when every replica is ready, and its negation otherwise.
func availableCondition(webapp *WebApp) metav1.Condition {
	if webapp.Status.ReadyReplicas >= webapp.Spec.Replicas {
		return metav1.Condition{
			Type:               "Available",
			Status:             metav1.ConditionTrue,
			Reason:             "DeploymentReady",
			Message:            "All replicas are available",
			LastTransitionTime: metav1.Now(),
		}
	}
	return metav1.Condition{
		Type:               "Available",
		Status:             metav1.ConditionFalse,
		Reason:             "DeploymentNotReady",
		Message:            fmt.Sprintf("%d of %d replicas ready", webapp.Status.ReadyReplicas, webapp.Spec.Replicas),
		LastTransitionTime: metav1.Now(),
	}
}

func (r *WebAppReconciler) desiredDeployment(webapp *WebApp) *appsv1.Deployment {
	labels := map[string]string{
		"app":        webapp.Name,
		"managed-by": "webapp-operator",
	}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{
			Name:      fmt.Sprintf("%s-deployment", webapp.Name),
			Namespace: webapp.Namespace,
			Labels:    labels,
		},
		Spec: appsv1.DeploymentSpec{
			Replicas: &webapp.Spec.Replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					Containers: []corev1.Container{{
						Name:  "app",
						Image: webapp.Spec.Image,
						Ports: []corev1.ContainerPort{{ContainerPort: webapp.Spec.Port}},
					}},
				},
			},
		},
	}
	ctrl.SetControllerReference(webapp, dep, r.Scheme())
	return dep
}

func (r *WebAppReconciler) desiredService(webapp *WebApp) *corev1.Service {
	labels := map[string]string{
		"app":        webapp.Name,
		"managed-by": "webapp-operator",
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name:      fmt.Sprintf("%s-svc", webapp.Name),
			Namespace: webapp.Namespace,
			Labels:    labels,
		},
		Spec: corev1.ServiceSpec{
			Selector: labels,
			Ports: []corev1.ServicePort{{
				Port:       80,
				TargetPort: intstr.FromInt32(webapp.Spec.Port),
			}},
		},
	}
	ctrl.SetControllerReference(webapp, svc, r.Scheme())
	return svc
}

func (r *WebAppReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&WebApp{}).             // watch WebApp CRs
		Owns(&appsv1.Deployment{}). // watch Deployments owned by a WebApp
		Owns(&corev1.Service{}).    // watch Services owned by a WebApp
		WithOptions(controller.Options{MaxConcurrentReconciles: r.MaxConcurrentReconciles}).
		Complete(r)
}
