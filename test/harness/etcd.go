package harness

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
)

// EtcdGet reads key from the control plane's etcd through its JSON gateway:
// what kube-apiserver stored (custom resources as JSON, in their storage
// version). nil when the key does not exist.
func (cp *ControlPlane) EtcdGet(ctx context.Context, key string) ([]byte, error) {
	body, err := json.Marshal(map[string]string{"key": base64.StdEncoding.EncodeToString([]byte(key))})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cp.etcdURL+"/v3/kv/range", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("read %s from etcd: %w", key, err)
	}
	defer resp.Body.Close()
	var out struct {
		Kvs []struct {
			Value []byte `json:"value"`
		} `json:"kvs"`
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("read %s from etcd: %s", key, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, fmt.Errorf("read %s from etcd: %w", key, err)
	}
	if len(out.Kvs) == 0 {
		return nil, nil
	}
	return out.Kvs[0].Value, nil
}
