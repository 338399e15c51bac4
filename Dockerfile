# aivis: REST + MCP server. Runs TypeScript through tsx (a runtime dependency), so no build step.
FROM node:20-slim

WORKDIR /app
ENV NODE_ENV=production

# Dependencies first, so a source change reuses this layer.
COPY package.json package-lock.json ./
RUN npm ci --omit=dev && npm cache clean --force

COPY . .

# Embedded mode (no DATABASE_URL) keeps its PGlite data here; mount a volume to keep it.
ENV DATA_DIR=/data \
    HOST=0.0.0.0 \
    PORT=8080
RUN mkdir -p /data && chown node:node /data
VOLUME /data

USER node
EXPOSE 8080
CMD ["npm", "start"]
