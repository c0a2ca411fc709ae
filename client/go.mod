module github.com/mailroom/mailroom/client

go 1.24
