#!/bin/sh
exec java -Xmx128m -Dlog4j.configuration=file:/opt/kafka/log4j.properties -cp '/opt/kafka/libs/*' kafka.admin.BrokerApiVersionsCommand "$@"
