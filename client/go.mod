module github.com/mailroom/mailroom/client

go 1.26.8
