# syntax=docker/dockerfile:1
# mailstats in server mode: compiled JavaScript, production dependencies only, no embedded engine (chdb is
# an optional dependency and is left out: the image needs CLICKHOUSE_URL), running as the non-root `node`.
#   docker build -t mailstats .        docker compose up -d   (see README, "Containers")
ARG NODE_VERSION=26

# 1. Compile TypeScript to dist/ and build the dashboard into dashboard/dist (dev dependencies; optional
#    ones too, since Vite's bundler needs its native binding — chdb comes along but stays in this stage).
FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm install --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json main.ts ./
COPY admin ./admin
COPY service ./service
COPY ingest ./ingest
COPY query-api ./query-api
COPY shared ./shared
COPY dashboard ./dashboard
RUN npm run build

# 2. Production dependencies only.
FROM node:${NODE_VERSION}-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm install --no-audit --no-fund --omit=dev --omit=optional --ignore-scripts \
    && npm cache clean --force

# 3. Runtime.
FROM node:${NODE_VERSION}-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080
WORKDIR /app
COPY --from=deps --chown=root:root /app/node_modules ./node_modules
COPY --from=build --chown=root:root /app/dist ./dist
COPY --from=build --chown=root:root /app/dashboard/dist ./dashboard/dist
COPY --chown=root:root package.json ./
# The base image's unprivileged `node` user, numerically so that runtimes can check it is not root.
USER 1000:1000
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
    CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# kafkajs schedules setTimeout(-1) (clamped to 1 ms); Node 24+ warns about it at every start.
CMD ["node", "--disable-warning=TimeoutNegativeWarning", "dist/main.js"]
