# devctl operator image: the same single executable users download, run as `devctl operator run`.
#   docker build --build-arg DEVCTL_COMMIT=$(git rev-parse --short=12 HEAD) -t devctl:dev .
# Stage 1 builds the executable with Bun (installed from npm as a devDependency, like everywhere else).
FROM node:22-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY bunfig.toml tsconfig.json ./
COPY src ./src
ARG DEVCTL_COMMIT=unknown
ENV DEVCTL_COMMIT=${DEVCTL_COMMIT}
RUN npm run build && ./dist/devctl --version

# Stage 2: glibc + libstdc++ only (what the Bun runtime links against), no shell, no package manager.
FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /src/dist/devctl /usr/local/bin/devctl
# 65532 = nonroot in distroless; install's Deployment also sets runAsNonRoot and a read-only root filesystem.
USER 65532:65532
EXPOSE 8080 8081
ENTRYPOINT ["/usr/local/bin/devctl", "operator", "run"]
