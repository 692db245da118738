package cmd

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/rukpak-kapp/rukpak-kapp/cmd/rukpak-kapp/client"
)

// outputFormats are what -o takes on a command that prints a report, as
// kubectl's -o names them.
const outputFormats = "text, json or yaml"

// objectFormats are what -o takes on a command that prints objects: YAML
// by default, as kubectl apply -f reads it, or JSON.
const objectFormats = "yaml or json"

// checkOutput refuses an -o value no report is printed in.
func checkOutput(o string) error {
	switch o {
	case "text", "json", "yaml":
		return nil
	}
	return usageError{fmt.Errorf("-o %q: use %s", o, outputFormats)}
}

// objectOutputFlag binds -o on a command that prints objects.
func objectOutputFlag(fs *pflag.FlagSet) *string {
	return fs.StringP("output", "o", "yaml", "output format: "+objectFormats)
}

// checkObjectOutput refuses an -o value no object is printed in.
func checkObjectOutput(o string) error {
	switch o {
	case "yaml", "json":
		return nil
	}
	return usageError{fmt.Errorf("-o %q: use %s", o, objectFormats)}
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

// objectPrinter prints the objects of a command in the format of its -o:
// YAML documents as they come, each after "---", or with -o json one v1
// List of them all at flush, so that a script reads one JSON value however
// many objects there are (as kubectl prints a list). Notes, which say what
// a user of the objects should know, are comments at the top of the YAML;
// JSON has no comments, so there they go to errOut.
type objectPrinter struct {
	out, errOut io.Writer
	format      string
	items       []map[string]any
}

// note says one note (its lines joined, so a comment stays one line).
func (p *objectPrinter) note(prefix, n string) error {
	line := "note: " + prefix + strings.ReplaceAll(n, "\n", " ") + "\n"
	if p.format == "json" {
		_, err := io.WriteString(p.errOut, line)
		return err
	}
	_, err := io.WriteString(p.out, "# "+line)
	return err
}

// print prints obj without its status and creation time, after trim (nil:
// nothing more) has had its say.
func (p *objectPrinter) print(obj runtime.Object, trim func(map[string]any)) error {
	raw, err := client.Manifest(obj, trim)
	if err != nil {
		return err
	}
	if p.format == "json" {
		p.items = append(p.items, raw)
		return nil
	}
	data, err := yaml.Marshal(raw)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(p.out, "---\n%s", data)
	return err
}

// flush prints what JSON held back; YAML printed everything already.
func (p *objectPrinter) flush() error {
	if p.format != "json" {
		return nil
	}
	items := p.items
	if items == nil {
		items = []map[string]any{}
	}
	_, err := writeStructured(p.out, map[string]any{"apiVersion": "v1", "kind": "List", "items": items}, "json")
	return err
}

// writeLock prints an images lock (YAML, as imgpkg writes it) in the
// format of -o.
func writeLock(out io.Writer, data []byte, format string) error {
	if format == "json" {
		var lock any
		if err := yaml.Unmarshal(data, &lock); err != nil {
			return fmt.Errorf("read the images lock back: %w", err)
		}
		_, err := writeStructured(out, lock, "json")
		return err
	}
	_, err := out.Write(data)
	return err
}
