module github.com/codeoid/codeoid/examples/go

go 1.22
