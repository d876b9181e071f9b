import { describe, expect, test } from "bun:test";
import { type Expose, exposeUrl } from "../api/expose.ts";
import type { OwnerReference } from "../kube/types.ts";
import { testApp } from "./_test-fixtures.ts";
import {
  controllerReference,
  desiredDeployment,
  desiredHorizontalPodAutoscaler,
  desiredIngress,
  desiredPodDisruptionBudget,
  desiredService,
  pullPolicyFor,
  wantsAutoscaler,
  wantsDisruptionBudget,
  wantsIngress,
  webAppSelector,
} from "./desired.ts";

const labels = { app: "test-app", "managed-by": "webapp-operator" };
const owner = {
  apiVersion: "apps.example.com/v1",
  kind: "WebApp",
  name: "test-app",
  uid: "uid-1",
  controller: true,
  blockOwnerDeletion: true,
};

describe("desiredDeployment", () => {
  test("the seed's test-app becomes test-app-deployment with 3 replicas of nginx:1.25, and only owned fields", () => {
    expect(desiredDeployment(testApp())).toEqual({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "test-app-deployment", namespace: "default", labels, ownerReferences: [owner] },
      spec: {
        replicas: 3,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            containers: [
              {
                name: "app",
                image: "nginx:1.25",
                imagePullPolicy: "IfNotPresent",
                ports: [{ containerPort: 80, protocol: "TCP" }],
              },
            ],
          },
        },
      },
    });
  });

  test("the same WebApp always gives the same intent, and intents share no mutable parts", () => {
    const a = desiredDeployment(testApp());
    const b = desiredDeployment(testApp());
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
    a.spec.selector.matchLabels.app = "changed";
    expect(a.spec.template.metadata.labels.app).toBe("test-app");
  });
});

describe("the container's imagePullPolicy", () => {
  const policyOf = (spec: Parameters<typeof testApp>[0]) =>
    desiredDeployment(testApp(spec)).spec.template.spec.containers[0]?.imagePullPolicy;

  test("spec.imagePullPolicy is used as given", () => {
    expect(policyOf({ image: "nginx:1.25", imagePullPolicy: "Never" })).toBe("Never");
    expect(policyOf({ image: "nginx:latest", imagePullPolicy: "IfNotPresent" })).toBe("IfNotPresent");
    expect(policyOf({ image: "nginx:1.25", imagePullPolicy: "Always" })).toBe("Always");
  });

  test("left out, it is what the API server defaults: Always for :latest or no tag, else IfNotPresent", () => {
    expect(policyOf({ image: "nginx:1.25" })).toBe("IfNotPresent");
    expect(policyOf({ image: "nginx" })).toBe("Always");
    expect(policyOf({ image: "nginx:latest" })).toBe("Always");
    // A registry port is not a tag; a digest without a tag is not "latest".
    expect(pullPolicyFor("registry.local:5000/team/app")).toBe("Always");
    expect(pullPolicyFor("registry.local:5000/team/app:v2")).toBe("IfNotPresent");
    expect(pullPolicyFor(`nginx@sha256:${"a".repeat(64)}`)).toBe("IfNotPresent");
    expect(pullPolicyFor(`nginx:latest@sha256:${"a".repeat(64)}`)).toBe("Always");
  });
});

describe("desiredService", () => {
  test("sends port 80 (named http) to the WebApp's port on the pods it labels", () => {
    expect(desiredService(testApp({ port: 8080 }))).toEqual({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "test-app-svc", namespace: "default", labels, ownerReferences: [owner] },
      spec: { selector: labels, ports: [{ name: "http", port: 80, targetPort: 8080, protocol: "TCP" }] },
    });
  });
});

describe("controllerReference", () => {
  test("a WebApp never stored (no uid) yields objects without an owner reference", () => {
    const app = testApp({}, null);
    expect(controllerReference(app)).toBeUndefined();
    expect(desiredService(app).metadata).not.toHaveProperty("ownerReferences");
    expect(desiredDeployment(app).metadata).not.toHaveProperty("ownerReferences");
  });
});

test("webAppSelector is the label selector of the pods", () => {
  expect(webAppSelector("my-service")).toBe("app=my-service,managed-by=webapp-operator");
});

describe("desiredPodDisruptionBudget", () => {
  test("maxUnavailable 1 by default, the pods' selector, AlwaysAllow for pods that are not ready, owned", () => {
    expect(desiredPodDisruptionBudget(testApp())).toEqual({
      apiVersion: "policy/v1",
      kind: "PodDisruptionBudget",
      metadata: {
        name: "test-app-pdb",
        namespace: "default",
        labels: { app: "test-app", "managed-by": "webapp-operator" },
        ownerReferences: [controllerReference(testApp()) as OwnerReference],
      },
      spec: {
        selector: { matchLabels: { app: "test-app", "managed-by": "webapp-operator" } },
        maxUnavailable: 1,
        unhealthyPodEvictionPolicy: "AlwaysAllow",
      },
    });
  });

  test("the spec's bound instead; wanted from 2 replicas unless turned off", () => {
    expect(desiredPodDisruptionBudget(testApp({ disruptionBudget: { minAvailable: 2 } })).spec).toMatchObject({
      minAvailable: 2,
    });
    expect(desiredPodDisruptionBudget(testApp({ disruptionBudget: { maxUnavailable: 3 } })).spec.maxUnavailable).toBe(
      3,
    );
    expect(wantsDisruptionBudget(testApp({ replicas: 2 }).spec)).toBe(true);
    expect(wantsDisruptionBudget(testApp({ replicas: 1 }).spec)).toBe(false);
    expect(wantsDisruptionBudget(testApp({ disruptionBudget: { enabled: false } }).spec)).toBe(false);
  });
});

describe("autoscaling", () => {
  const autoscaled = (autoscaling: NonNullable<ReturnType<typeof testApp>["spec"]["autoscaling"]>) =>
    testApp({ replicas: undefined, autoscaling, resources: { requests: { cpu: "100m", memory: "64Mi" } } });

  test("the Deployment leaves spec.replicas to the autoscaler; left out without autoscaling, it is 1", () => {
    const intent = desiredDeployment(autoscaled({ maxReplicas: 10 }));
    expect(intent.spec).not.toHaveProperty("replicas");
    expect(Object.keys(intent.spec)).toEqual(["selector", "template"]);
    expect(desiredDeployment(testApp({ replicas: undefined })).spec.replicas).toBe(1);
  });

  test("the HorizontalPodAutoscaler targets the Deployment, every defaulted field set: min 1, CPU at 80%", () => {
    const app = autoscaled({ maxReplicas: 10 });
    expect(wantsAutoscaler(app.spec)).toBe(true);
    expect(wantsAutoscaler(testApp().spec)).toBe(false);
    expect(desiredHorizontalPodAutoscaler(app)).toEqual({
      apiVersion: "autoscaling/v2",
      kind: "HorizontalPodAutoscaler",
      metadata: { name: "test-app-hpa", namespace: "default", labels, ownerReferences: [owner] },
      spec: {
        scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "test-app-deployment" },
        minReplicas: 1,
        maxReplicas: 10,
        metrics: [
          { type: "Resource", resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 80 } } },
        ],
      },
    });
  });

  test("the spec's targets, memory as a second metric; a PodDisruptionBudget from a minimum of 2", () => {
    const app = autoscaled({
      minReplicas: 2,
      maxReplicas: 6,
      targetCPUUtilizationPercentage: 50,
      targetMemoryUtilizationPercentage: 70,
    });
    expect(desiredHorizontalPodAutoscaler(app).spec.metrics.map((m) => m.resource)).toEqual([
      { name: "cpu", target: { type: "Utilization", averageUtilization: 50 } },
      { name: "memory", target: { type: "Utilization", averageUtilization: 70 } },
    ]);
    expect(wantsDisruptionBudget(app.spec)).toBe(true);
    expect(wantsDisruptionBudget(autoscaled({ maxReplicas: 6 }).spec)).toBe(false);
  });
});

describe("desiredIngress", () => {
  test("host and / to the Service's http port, no class or TLS unless set", () => {
    const app = testApp({ expose: { host: "shop.example.com" } });
    expect(wantsIngress(app.spec)).toBe(true);
    expect(wantsIngress(testApp().spec)).toBe(false);
    expect(desiredIngress(app)).toEqual({
      apiVersion: "networking.k8s.io/v1",
      kind: "Ingress",
      metadata: {
        name: "test-app-ingress",
        namespace: "default",
        labels: { app: "test-app", "managed-by": "webapp-operator" },
        ownerReferences: [controllerReference(app) as OwnerReference],
      },
      spec: {
        rules: [
          {
            host: "shop.example.com",
            http: {
              paths: [
                {
                  path: "/",
                  pathType: "Prefix",
                  backend: { service: { name: "test-app-svc", port: { name: "http" } } },
                },
              ],
            },
          },
        ],
      },
    });
    expect(exposeUrl(app.spec.expose as Expose)).toBe("http://shop.example.com/");
  });

  test("a path, a class and a TLS Secret for the host; the URL is https then", () => {
    const app = testApp({
      expose: { host: "shop.example.com", path: "/api", ingressClassName: "nginx", tlsSecretName: "shop-tls" },
    });
    const spec = desiredIngress(app).spec;
    expect(spec.ingressClassName).toBe("nginx");
    expect(spec.tls).toEqual([{ hosts: ["shop.example.com"], secretName: "shop-tls" }]);
    expect(spec.rules[0]?.http.paths[0]?.path).toBe("/api");
    expect(exposeUrl(app.spec.expose as Expose)).toBe("https://shop.example.com/api");
  });
});
