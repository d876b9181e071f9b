/** Test fixtures for the operator's unit tests (imported only by *.test.ts). */
import type { WebApp } from "../api/webapp.ts";

/** The seed's test-app WebApp; `uid: null` gives a WebApp never stored. */
export function testApp(over: Partial<WebApp["spec"]> = {}, uid: string | null = "uid-1", generation = 1): WebApp {
  return {
    apiVersion: "apps.example.com/v1",
    kind: "WebApp",
    metadata: { name: "test-app", namespace: "default", generation, ...(uid !== null ? { uid } : {}) },
    spec: { image: "nginx:1.25", replicas: 3, port: 80, ...over },
  };
}
