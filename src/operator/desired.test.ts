import { describe, expect, test } from "bun:test";
import { testApp } from "./_test-fixtures.ts";
import { controllerReference, desiredDeployment, desiredService, webAppSelector } from "./desired.ts";

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
          spec: { containers: [{ name: "app", image: "nginx:1.25", ports: [{ containerPort: 80, protocol: "TCP" }] }] },
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
