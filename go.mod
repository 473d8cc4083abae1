module github.com/archc/archc

go 1.26.8
