import { describe, expect, test } from "bun:test";
import { testApp } from "./_test-fixtures.ts";
import { controllerReference, desiredDeployment, desiredService, pullPolicyFor, webAppSelector } from "./desired.ts";

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
