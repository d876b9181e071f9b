# devctl operator image: the same single executable users download, run as `devctl operator run`.
# Nothing is pulled: the only stage starts FROM scratch. The build context is staged by `npm run image`
# (src/build/image.ts), which also builds this file with buildah, podman or docker:
#   npm run image                         # builds dist/devctl, stages dist/image/, builds, prints IMAGE=<ref>
#   npm run image -- --stage-only && docker build -t devctl:dev .   # the same with your own builder
# dist/image/rootfs/ holds exactly the shared libraries `ldd dist/devctl` names (glibc from the
# build machine's pinned Debian package), /etc/passwd and /etc/group with the user 65532, and /tmp.
FROM scratch
COPY dist/image/rootfs/ /
COPY dist/devctl /devctl
# 65532 = "nonroot"; install's Deployment also sets runAsNonRoot and a read-only root filesystem.
USER 65532:65532
EXPOSE 8080 8081
ENTRYPOINT ["/devctl", "operator", "run"]
