package main

import (
	"encoding/json"
	"fmt"
	"io"

	"sigs.k8s.io/yaml"
)

// outputFormats are what -o takes on a command that prints a report, as
// kubectl's -o names them.
const outputFormats = "text, json or yaml"

// checkOutput refuses an -o value no report is printed in.
func checkOutput(o string) error {
	switch o {
	case "text", "json", "yaml":
		return nil
	}
	return usageError{fmt.Errorf("-o %q: use %s", o, outputFormats)}
}

// writeStructured prints v as JSON or YAML when format asks for one, and
// says whether it did (text is the caller's own).
func writeStructured(out io.Writer, v any, format string) (bool, error) {
	switch format {
	case "json":
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return true, enc.Encode(v)
	case "yaml":
		data, err := yaml.Marshal(v)
		if err != nil {
			return true, err
		}
		_, err = out.Write(data)
		return true, err
	}
	return false, nil
}
