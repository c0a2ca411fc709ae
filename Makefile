# The two commands a newcomer needs: `make run` and `make test`.
.PHONY: run test build

run: ## run the service in development mode (HTTPS on 127.0.0.1:8443, key printed)
	go run ./cmd/mailroom serve --dev

test: ## go vet and every test, on SQLite and (when configured) PostgreSQL
	./scripts/test

build: ## a static binary in ./bin
	CGO_ENABLED=0 go build -o bin/mailroom ./cmd/mailroom
